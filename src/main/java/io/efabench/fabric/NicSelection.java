package io.efabench.fabric;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code EFABENCH_NICS}: the NICs (libfabric domain names, e.g. {@code rail0,rail1} or
 * {@code rdmap16s27-rdm,...}) every rank of a node takes, in channel order: channel k is the k-th
 * name on every rank, so where each node names its NICs by rail the channels are rail-aligned. Not
 * set: the provider's NICs as placement picks them (fi_getinfo order, split among local ranks).
 */
public final class NicSelection {
    public static final String VARIABLE = "EFABENCH_NICS";

    private NicSelection() {
    }

    /** The names in {@code EFABENCH_NICS}, or an empty list when it is unset or blank. */
    public static List<String> fromEnvironment() {
        return parse(System.getenv(VARIABLE));
    }

    /** True when {@code EFABENCH_NICS} names the NICs (every local rank then takes all of them). */
    public static boolean named() {
        return !fromEnvironment().isEmpty();
    }

    static List<String> parse(String value) {
        if (value == null || value.isBlank()) {
            return List.of();
        }
        List<String> names = new ArrayList<>();
        for (String part : value.split(",")) {
            String name = part.trim();
            if (name.isEmpty()) {
                throw new FabricException(VARIABLE + "=" + value + ": an empty NIC name; give domain names separated by commas,"
                        + " e.g. rail0,rail1");
            }
            if (names.contains(name)) {
                throw new FabricException(VARIABLE + "=" + value + ": NIC '" + name + "' named twice");
            }
            names.add(name);
        }
        return names;
    }

    /**
     * Positions (into {@code domains}, one per fi_info entry) of the first entry of each named
     * domain, in the order of {@code names}; a name no entry has is a one-line error listing what
     * the provider offers.
     */
    static List<Integer> choose(List<String> domains, List<String> names, String provider) {
        Map<String, Integer> first = new LinkedHashMap<>();
        for (int i = 0; i < domains.size(); i++) {
            first.putIfAbsent(domains.get(i), i);
        }
        List<Integer> keep = new ArrayList<>();
        for (String name : names) {
            Integer at = first.get(name);
            if (at == null) {
                throw new FabricException(VARIABLE + "=" + String.join(",", names) + ": no NIC '" + name + "' here; "
                        + provider + " offers " + String.join(", ", first.keySet()));
            }
            keep.add(at);
        }
        return keep;
    }
}
