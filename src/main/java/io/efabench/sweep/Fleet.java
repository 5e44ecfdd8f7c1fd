package io.efabench.sweep;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.efabench.fabric.Discovery;
import io.efabench.fabric.NicInfo;
import io.efabench.fabric.NicPath;
import io.efabench.rank.RankGroup;
import io.efabench.topology.InstanceType;
import io.efabench.topology.Sysfs;

/**
 * The nodes of a sweep as each one told the others: node i is rank i, its host name and its NICs
 * in discovery's order (EFABENCH_NICS's where set), rail k being NIC k of every node. One rank per
 * node; nodes with different NIC counts are swept on the rails all of them have, and the others
 * are named in {@link #notes}. {@code lineGbps}: one NIC's line rate where it is known (efa: the
 * instance type's published rate; verbs: the port speed the NICs report), the lowest of all nodes;
 * 0 elsewhere (tcp reports its interface's speed, which its goodput does not approach).
 */
record Fleet(List<String> hosts, List<List<String>> nics, int rails, String provider, double lineGbps, List<String> notes) {
    /** A NIC as the findings name it: libfabric domain, and PCI address where the provider gives one. */
    static String describe(NicInfo n) {
        return n.domainName() + (n.pci() != null ? " (" + n.pci() + ")" : "");
    }

    /** Every rank's host and NICs, in rank order; a one-line refusal where two ranks share a host or a node has none. */
    static Fleet gather(RankGroup world, Duration timeout) {
        String provider;
        List<String> mine = new ArrayList<>();
        double line = Double.MAX_VALUE;
        try (Discovery d = Discovery.discover(false, NicPath.fromEnvironment())) {
            provider = d.provider();
            for (NicInfo n : d.nics()) {
                mine.add(describe(n));
                line = Math.min(line, knownLineGbps(n));
            }
        }
        String me = RankGroup.hostname() + "\t" + provider + "\t" + (mine.isEmpty() ? 0 : line) + "\t" + String.join("\t", mine);
        List<String> hosts = new ArrayList<>();
        List<List<String>> nics = new ArrayList<>();
        List<String> providers = new ArrayList<>();
        double fleetLine = Double.MAX_VALUE;
        for (byte[] b : world.allgather("sweep: every node's NICs", me.getBytes(UTF_8), timeout)) {
            String[] f = new String(b, UTF_8).split("\t", -1);
            hosts.add(f[0]);
            providers.add(f[1]);
            fleetLine = Math.min(fleetLine, Double.parseDouble(f[2]));
            nics.add(f.length > 3 && !f[3].isEmpty() ? List.of(f).subList(3, f.length) : List.of());
        }
        for (int i = 0; i < hosts.size(); i++) {
            int j = hosts.indexOf(hosts.get(i));
            if (j != i) {
                throw new IllegalArgumentException("sweep: ranks " + j + " and " + i + " both run on " + hosts.get(i)
                        + ": the sweep runs one rank per node (srun --ntasks-per-node=1, mpirun --map-by ppr:1:node)");
            }
            if (!providers.get(i).equals(providers.get(0))) {
                throw new IllegalArgumentException("sweep: " + hosts.get(i) + " uses " + providers.get(i) + " and "
                        + hosts.get(0) + " " + providers.get(0) + ": every node needs the same provider (FI_PROVIDER)");
            }
            if (nics.get(i).isEmpty()) {
                throw new IllegalArgumentException("sweep: " + hosts.get(i) + " has no NIC for " + providers.get(i));
            }
        }
        int rails = nics.stream().mapToInt(List::size).min().orElse(0);
        int most = nics.stream().mapToInt(List::size).max().orElse(0);
        List<String> notes = new ArrayList<>();
        for (int i = 0; i < hosts.size() && most > rails; i++) {
            if (nics.get(i).size() > rails) {
                notes.add(hosts.get(i) + " has " + nics.get(i).size() + " NICs, the fewest any node has is " + rails
                        + ": rails 0.." + (rails - 1) + " swept, not measured: " + nics.get(i).subList(rails, nics.get(i).size()));
            } else {
                notes.add(hosts.get(i) + " has " + rails + " NICs of the " + most + " other nodes have: rails " + rails + ".."
                        + (most - 1) + " not measured anywhere");
            }
        }
        return new Fleet(List.copyOf(hosts), List.copyOf(nics), rails, providers.get(0), fleetLine, List.copyOf(notes));
    }

    /** One NIC's line rate where it is known: efa's from the instance type, verbs' reported port speed; else 0. */
    static double knownLineGbps(NicInfo n) {
        if (n.provider().startsWith("efa")) {
            return InstanceType.of(Sysfs.fromEnvironment()).efaNicGbps();
        }
        return n.provider().startsWith("verbs") ? n.plausibleLinkGbps() : 0;
    }

    int nodes() {
        return hosts.size();
    }

    /** "host nic" of node {@code i}'s rail {@code k}. */
    String nic(int i, int k) {
        return hosts.get(i) + " " + nics.get(i).get(k);
    }
}
