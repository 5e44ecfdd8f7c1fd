package io.efabench.sweep;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import io.efabench.fabric.Discovery;
import io.efabench.fabric.FabricException;
import io.efabench.fabric.NicInfo;
import io.efabench.fabric.NicPath;
import io.efabench.fabric.NicSelection;
import io.efabench.rank.RankGroup;
import io.efabench.topology.InstanceType;
import io.efabench.topology.Sysfs;

/**
 * The nodes of a sweep as each one told the others: node i is rank i, its host name and, per
 * rail, its NIC's libfabric domain (null where the node lacks it) and how the findings name it.
 * Rail k is the k-th NIC EFABENCH_NICS names (the testbed's rail0, rail1...): a node whose NIC
 * for a rail is not listed by its provider (link down, driver gone) is swept on its other rails
 * and named unreachable on that one. Without EFABENCH_NICS, rail k is every node's k-th NIC as the
 * provider lists them, on the rails all nodes have ({@link #notes} says which NICs were left out).
 * One rank per node. {@code lineGbps}: one NIC's line rate where it is known (efa: the instance
 * type's published rate; verbs: the port speed the NICs report), the lowest of all nodes; 0
 * elsewhere (tcp reports its interface's speed, which its goodput does not approach).
 */
record Fleet(List<String> hosts, List<List<String>> domains, List<List<String>> nics, int rails, String provider,
        double lineGbps, List<String> notes) {
    /** A NIC as the findings name it: libfabric domain, and PCI address where the provider gives one. */
    static String describe(NicInfo n) {
        return n.domainName() + (n.pci() != null ? " (" + n.pci() + ")" : "");
    }

    /** Every rank's host and NICs, in rank order; a one-line refusal where two ranks share a host or a node has none. */
    static Fleet gather(RankGroup world, Duration timeout) {
        List<String> named = NicSelection.fromEnvironment();
        String me;
        try (Discovery d = Discovery.discover(false, NicPath.fromEnvironment(), List.of())) {
            Map<String, NicInfo> listed = new TreeMap<>();
            d.nics().forEach(n -> listed.put(n.domainName(), n));
            List<String> rails = named.isEmpty() ? d.nics().stream().map(NicInfo::domainName).toList() : named;
            double line = Double.MAX_VALUE;
            StringBuilder b = new StringBuilder(RankGroup.hostname() + "\t" + d.provider());
            StringBuilder nics = new StringBuilder();
            for (String rail : rails) {
                NicInfo n = listed.get(rail);
                nics.append('\t').append(n == null ? "" : n.domainName() + "\u0001" + describe(n));
                if (n != null) {
                    line = Math.min(line, knownLineGbps(n));
                }
            }
            me = b.append('\t').append(line == Double.MAX_VALUE ? 0 : line).append(nics).toString();
        } catch (FabricException e) {
            // Told to the others rather than thrown here: every node's line is then said at once.
            me = "!" + RankGroup.hostname() + ": " + e.getMessage().replace('\t', ' ');
        }
        List<byte[]> told = world.allgather("sweep: every node's NICs", me.getBytes(UTF_8), timeout);
        List<String> refused = told.stream().map(x -> new String(x, UTF_8)).filter(t -> t.startsWith("!"))
                .map(t -> t.substring(1)).toList();
        if (!refused.isEmpty()) {
            throw new IllegalArgumentException(String.join("\nsweep: ", refused));
        }
        List<String> hosts = new ArrayList<>();
        List<List<String>> domains = new ArrayList<>();
        List<List<String>> nics = new ArrayList<>();
        List<String> providers = new ArrayList<>();
        double fleetLine = Double.MAX_VALUE;
        for (byte[] x : told) {
            String[] f = new String(x, UTF_8).split("\t", -1);
            hosts.add(f[0]);
            providers.add(f[1]);
            fleetLine = Math.min(fleetLine, Double.parseDouble(f[2]));
            List<String> dom = new ArrayList<>();
            List<String> desc = new ArrayList<>();
            for (int i = 3; i < f.length; i++) {
                String[] p = f[i].split("\u0001", 2);
                dom.add(f[i].isEmpty() ? null : p[0]);
                desc.add(f[i].isEmpty() ? null : p[1]);
            }
            domains.add(dom);
            nics.add(desc);
        }
        List<String> notes = new ArrayList<>();
        for (int i = 0; i < hosts.size(); i++) {
            int j = hosts.indexOf(hosts.get(i));
            if (j != i) {
                throw new IllegalArgumentException("ranks " + j + " and " + i + " both run on " + hosts.get(i)
                        + ": the sweep runs one rank per node (srun --ntasks-per-node=1, mpirun --map-by ppr:1:node)");
            }
            if (!providers.get(i).equals(providers.get(0))) {
                throw new IllegalArgumentException(hosts.get(i) + " uses " + providers.get(i) + " and " + hosts.get(0) + " "
                        + providers.get(0) + ": every node needs the same provider (FI_PROVIDER)");
            }
        }
        int rails = domains.stream().mapToInt(List::size).min().orElse(0);
        int most = domains.stream().mapToInt(List::size).max().orElse(0);
        for (int i = 0; i < hosts.size(); i++) {
            if (domains.get(i).size() > rails) {
                notes.add(hosts.get(i) + " has " + domains.get(i).size() + " NICs, some node only " + rails + ": not swept: "
                        + nics.get(i).subList(rails, nics.get(i).size()));
                domains.set(i, domains.get(i).subList(0, rails));
                nics.set(i, nics.get(i).subList(0, rails));
            } else if (most > rails) {
                notes.add(hosts.get(i) + " has " + rails + " NICs of the " + most + " others have: rails " + rails + ".."
                        + (most - 1) + " not swept");
            }
            for (int k = 0; k < rails; k++) {
                if (domains.get(i).get(k) == null) {
                    notes.add(hosts.get(i) + " has no NIC " + named.get(k) + " (rail " + k + "): its provider does not list it"
                            + " (link down?); unreachable on that rail, its other rails swept");
                }
            }
        }
        if (rails == 0) {
            throw new IllegalArgumentException("no NIC to sweep: " + (most == 0 ? "the nodes list none" : "some node lists none"));
        }
        return new Fleet(List.copyOf(hosts), copy(domains), copy(nics), rails, providers.get(0), fleetLine, List.copyOf(notes));
    }

    private static List<List<String>> copy(List<List<String>> l) {
        List<List<String>> out = new ArrayList<>();
        l.forEach(x -> out.add(java.util.Collections.unmodifiableList(new ArrayList<>(x))));
        return java.util.Collections.unmodifiableList(out);
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

    /** Node {@code i}'s NIC on rail {@code k} as the findings name it, "-" where it has none. */
    String nic(int i, int k) {
        String n = nics.get(i).get(k);
        return n == null ? "-" : n;
    }

    /** Node {@code i}'s libfabric domain on rail {@code k}, null where it has none. */
    String domain(int i, int k) {
        return domains.get(i).get(k);
    }
}
