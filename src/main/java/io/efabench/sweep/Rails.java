package io.efabench.sweep;

import java.net.InetAddress;
import java.net.InterfaceAddress;
import java.net.NetworkInterface;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.efabench.fabric.NicInfo;

/**
 * Which NICs of the nodes make one rail. With EFABENCH_NICS rail k is the k-th name on every node.
 * Without it a NIC's rail is what makes it one: its IPv4 subnet where it has an address (tcp,
 * verbs: NICs on one subnet are one rail wherever fi_getinfo lists them), else its position among
 * the node's NICs that have none (efa: the device index). Loopback is never a rail. A subnet that
 * only one node has, or on which two nodes hold the same address (a docker0 on every host), is
 * named in the notes and not swept. Rails go in subnet order, then device order.
 */
final class Rails {
    private Rails() {}

    /** One NIC as its node told it: libfabric domain, how findings name it, its rail's key, its IPv4 address (null: none). */
    record Nic(String domain, String described, String key, String address) {}

    /**
     * The rail map: each rail's key in order, each node's NIC per rail (null where it has none),
     * and what was left out and why.
     */
    record RailMap(List<String> keys, List<List<Nic>> byNode, List<String> notes) {
        int rails() {
            return keys.size();
        }
    }

    /** A NIC as the findings name it: libfabric domain, and PCI address where the provider gives one. */
    static String describe(NicInfo n) {
        return n.domainName() + (n.pci() != null ? " (" + n.pci() + ")" : "");
    }

    /** This node's NICs as it tells them: loopback left out; the rail keys as the class comment says. */
    static List<Nic> mine(List<NicInfo> listed) {
        List<Nic> out = new ArrayList<>();
        int device = 0;
        for (NicInfo n : listed) {
            if (n.isLoopback()) {
                continue;
            }
            String key = n.ipv4() != null ? subnet(n.ipv4(), prefixOf(n.ipv4(), n.fabricName())) : "device " + device++;
            out.add(new Nic(n.domainName(), describe(n), key, n.ipv4()));
        }
        return out;
    }

    /**
     * The subnet's prefix length for {@code ipv4}: as this host's interface holding the address
     * says, else from tcp's fabric name ("198.18.1.0/24") where it contains the address, else 32
     * (a rail of its own address: matched with no other node, so named and not swept).
     */
    static int prefixOf(String ipv4, String fabricName) {
        try {
            InetAddress a = InetAddress.ofLiteral(ipv4);
            NetworkInterface nic = NetworkInterface.getByInetAddress(a);
            if (nic != null) {
                for (InterfaceAddress ia : nic.getInterfaceAddresses()) {
                    if (a.equals(ia.getAddress())) {
                        return ia.getNetworkPrefixLength();
                    }
                }
            }
        } catch (java.io.IOException | IllegalArgumentException e) {
            // fall through to the fabric name
        }
        if (fabricName != null && fabricName.matches("\\d+\\.\\d+\\.\\d+\\.\\d+/\\d+")) {
            int prefix = Integer.parseInt(fabricName.substring(fabricName.indexOf('/') + 1));
            if (prefix <= 32 && subnet(ipv4, prefix).equals(subnet(fabricName.substring(0, fabricName.indexOf('/')), prefix))) {
                return prefix;
            }
        }
        return 32;
    }

    /** "198.18.1.0/24": {@code ipv4}'s network at {@code prefix} bits. */
    static String subnet(String ipv4, int prefix) {
        long v = value(ipv4);
        long mask = prefix == 0 ? 0 : (0xffffffffL << (32 - prefix)) & 0xffffffffL;
        long net = v & mask;
        return (net >>> 24) + "." + ((net >>> 16) & 0xff) + "." + ((net >>> 8) & 0xff) + "." + (net & 0xff) + "/" + prefix;
    }

    private static long value(String ipv4) {
        String[] p = ipv4.split("\\.");
        long v = 0;
        for (String x : p) {
            v = v << 8 | Integer.parseInt(x);
        }
        return v;
    }

    /**
     * Rails from what every node told ({@code told}, in rank order): by EFABENCH_NICS' order when
     * {@code named} is not empty (each node's NIC of that name, null where its provider does not
     * list it), else by key as the class comment says.
     */
    static RailMap match(List<String> hosts, List<List<Nic>> told, List<String> named) {
        List<String> notes = new ArrayList<>();
        List<String> keys;
        if (!named.isEmpty()) {
            keys = List.copyOf(named);
        } else {
            Map<String, List<Integer>> holders = new LinkedHashMap<>();
            for (int i = 0; i < told.size(); i++) {
                for (Nic n : told.get(i)) {
                    holders.computeIfAbsent(n.key(), k -> new ArrayList<>()).add(i);
                }
            }
            keys = new ArrayList<>();
            for (var e : holders.entrySet()) {
                String clash = clash(hosts, told, e.getKey());
                if (clash != null) {
                    notes.add("rail " + e.getKey() + " not swept: " + clash);
                } else if (e.getValue().stream().distinct().count() < 2) {
                    int i = e.getValue().get(0);
                    notes.add(hosts.get(i) + "'s NIC " + first(told.get(i), e.getKey()).described() + " (" + e.getKey()
                            + ") is on a rail no other node has: not swept");
                } else {
                    keys.add(e.getKey());
                }
            }
            keys.sort(Comparator.comparing(Rails::order));
        }
        List<List<Nic>> byNode = new ArrayList<>();
        for (int i = 0; i < told.size(); i++) {
            List<Nic> row = new ArrayList<>();
            for (int k = 0; k < keys.size(); k++) {
                String key = keys.get(k);
                Nic n = named.isEmpty() ? first(told.get(i), key) : byDomain(told.get(i), key);
                row.add(n);
                if (n == null) {
                    notes.add(hosts.get(i) + " has no NIC " + (named.isEmpty() ? "on " + key : key) + " (rail " + k
                            + "): its provider does not list it (link down?); unreachable on that rail, its other rails swept");
                } else if (named.isEmpty() && told.get(i).stream().filter(x -> x.key().equals(key)).count() > 1) {
                    notes.add(hosts.get(i) + " has more than one NIC on " + key + " (rail " + k + "): " + n.described()
                            + " swept, the others not");
                }
            }
            byNode.add(java.util.Collections.unmodifiableList(row));
        }
        return new RailMap(List.copyOf(keys), List.copyOf(byNode), List.copyOf(notes));
    }

    /** Two nodes holding one address on rail {@code key}: what the note says, else null. */
    private static String clash(List<String> hosts, List<List<Nic>> told, String key) {
        Map<String, Integer> seen = new HashMap<>();
        for (int i = 0; i < told.size(); i++) {
            Nic n = first(told.get(i), key);
            if (n != null && n.address() != null) {
                Integer j = seen.putIfAbsent(n.address(), i);
                if (j != null && j != i) {
                    return hosts.get(j) + " and " + hosts.get(i) + " both hold " + n.address() + " on it (a host-local"
                            + " network such as docker0, not a rail between nodes)";
                }
            }
        }
        return null;
    }

    private static Nic first(List<Nic> nics, String key) {
        return nics.stream().filter(n -> n.key().equals(key)).findFirst().orElse(null);
    }

    private static Nic byDomain(List<Nic> nics, String domain) {
        return nics.stream().filter(n -> n.domain().equals(domain)).findFirst().orElse(null);
    }

    /** Subnets by address then prefix, before devices by index. */
    private static String order(String key) {
        if (key.startsWith("device ")) {
            return String.format("1%010d", Integer.parseInt(key.substring(7)));
        }
        int slash = key.indexOf('/');
        return String.format("0%010d/%02d", value(key.substring(0, slash)), Integer.parseInt(key.substring(slash + 1)));
    }

    /**
     * "rail 0 (198.18.1.0/24): n1 rail0 198.18.1.11, n2 rail0 198.18.1.12, ... (30 more)": the map
     * as the sweep prints it first, at most {@code shown} nodes a rail.
     */
    static List<String> describe(RailMap m, List<String> hosts, int shown) {
        List<String> lines = new ArrayList<>();
        for (int k = 0; k < m.rails(); k++) {
            StringBuilder b = new StringBuilder("rail " + k + " (" + m.keys().get(k) + "): ");
            int n = Math.min(shown, hosts.size());
            for (int i = 0; i < n; i++) {
                Nic nic = m.byNode().get(i).get(k);
                b.append(i > 0 ? ", " : "").append(hosts.get(i)).append(' ')
                        .append(nic == null ? "-" : nic.described() + (nic.address() != null ? " " + nic.address() : ""));
            }
            if (hosts.size() > n) {
                b.append(", ... (").append(hosts.size() - n).append(" more)");
            }
            lines.add(b.toString());
        }
        return lines;
    }
}
