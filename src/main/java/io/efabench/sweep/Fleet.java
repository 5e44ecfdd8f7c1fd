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
 * The nodes of a sweep as each one told the others: node i is rank i, its host name (a label only),
 * the address the rank group reached it at (where pairs meet: no name is resolved) and, per rail,
 * its NIC's libfabric domain (null where the node lacks it) and how the findings name it. Which NICs
 * make a rail is {@link Rails}' answer: EFABENCH_NICS' order where it is set, else subnets (tcp,
 * verbs) and device order (efa), never loopback. A node whose NIC for a rail is not listed by its
 * provider (link down, driver gone) is swept on its other rails and named unreachable on that one.
 * One rank per node. {@code lineGbps}: one NIC's line rate where it is known (efa: the instance
 * type's published rate; verbs: the port speed the NICs report), the lowest of all nodes; 0
 * elsewhere (tcp reports its interface's speed, which its goodput does not approach).
 * {@code localPci}: this node's own NICs' PCI addresses by domain (not told to the others), where
 * the provider gives one: what places each rail's NIC next to a GPU.
 */
record Fleet(List<String> hosts, List<String> addresses, List<List<String>> domains, List<List<String>> nics,
        List<String> railKeys, String provider, double lineGbps, List<String> railMap, List<String> notes,
        Map<String, io.efabench.topology.PciAddress> localPci) {
    /** Nodes named per rail in the rail map printed first (the rest counted); sweep.json holds every node's NICs and the rails' keys. */
    static final int RAIL_MAP_NODES = 8;

    /** Every rank's host and NICs, in rank order; a one-line refusal where two ranks share a host or no rail is left. */
    static Fleet gather(RankGroup world, Duration timeout) {
        List<String> named = NicSelection.fromEnvironment();
        String me;
        Map<String, io.efabench.topology.PciAddress> localPci = new TreeMap<>();
        try (Discovery d = Discovery.discover(false, NicPath.fromEnvironment(), List.of())) {
            d.nics().stream().filter(n -> n.pci() != null).forEach(n -> localPci.put(n.domainName(), n.pci()));
            List<Rails.Nic> mine;
            double line = Double.MAX_VALUE;
            if (named.isEmpty()) {
                mine = Rails.mine(d.nics());
            } else {
                Map<String, NicInfo> listed = new TreeMap<>();
                d.nics().forEach(n -> listed.put(n.domainName(), n));
                mine = new ArrayList<>();
                for (String name : named) {
                    NicInfo n = listed.get(name);
                    if (n != null) {
                        mine.add(new Rails.Nic(n.domainName(), Rails.describe(n), name, n.ipv4()));
                    }
                }
            }
            for (NicInfo n : d.nics()) {
                if (mine.stream().anyMatch(x -> x.domain().equals(n.domainName()))) {
                    line = Math.min(line, knownLineGbps(n));
                }
            }
            StringBuilder b = new StringBuilder(RankGroup.hostname() + "\t" + d.provider() + "\t"
                    + (line == Double.MAX_VALUE ? 0 : line) + "\t" + orDash(world.address()));
            for (Rails.Nic n : mine) {
                b.append('\t').append(n.domain()).append(FIELD).append(n.described()).append(FIELD).append(n.key())
                        .append(FIELD).append(orDash(n.address()));
            }
            me = b.toString();
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
        List<String> addresses = new ArrayList<>();
        List<List<Rails.Nic>> nicsTold = new ArrayList<>();
        List<String> providers = new ArrayList<>();
        double fleetLine = Double.MAX_VALUE;
        for (byte[] x : told) {
            String[] f = new String(x, UTF_8).split("\t", -1);
            hosts.add(f[0]);
            providers.add(f[1]);
            fleetLine = Math.min(fleetLine, Double.parseDouble(f[2]));
            addresses.add(f[3].equals("-") ? null : f[3]);
            List<Rails.Nic> nics = new ArrayList<>();
            for (int i = 4; i < f.length; i++) {
                String[] p = f[i].split(FIELD, -1);
                nics.add(new Rails.Nic(p[0], p[1], p[2], p[3].equals("-") ? null : p[3]));
            }
            nicsTold.add(nics);
        }
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
        Rails.RailMap map = Rails.match(hosts, nicsTold, named);
        if (map.rails() == 0) {
            throw new IllegalArgumentException("no rail to sweep: no NIC (loopback aside) is on a network another node"
                    + " shares" + (map.notes().isEmpty() ? "" : " (" + String.join("; ", map.notes()) + ")"));
        }
        List<List<String>> domains = new ArrayList<>();
        List<List<String>> nics = new ArrayList<>();
        for (List<Rails.Nic> row : map.byNode()) {
            domains.add(row.stream().map(n -> n == null ? null : n.domain()).toList());
            nics.add(row.stream().map(n -> n == null ? null : n.described()).toList());
        }
        return new Fleet(List.copyOf(hosts), java.util.Collections.unmodifiableList(addresses), copy(domains), copy(nics),
                map.keys(), providers.get(0), fleetLine, Rails.describe(map, hosts, RAIL_MAP_NODES), map.notes(),
                Map.copyOf(localPci));
    }

    /** Separates a NIC's fields on the wire (a NIC's description holds spaces and parentheses). */
    private static final String FIELD = "\u0001";

    private static String orDash(String s) {
        return s == null ? "-" : s;
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

    int rails() {
        return railKeys.size();
    }

    /**
     * Where node {@code i}'s pair trials meet: the address the rank group reached it at, else its
     * host name (a group formed without a socket to read it from).
     */
    String meetingAddress(int i) {
        String a = addresses.get(i);
        return a != null ? a : hosts.get(i);
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
