package io.efabench.harness.trial;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import io.efabench.fabric.NicInfo;
import io.efabench.topology.InstanceType;
import io.efabench.harness.BenchmarkSetupException;
import io.efabench.harness.Sizes;

/**
 * What a trial checks of its input and its environment before it trusts them, each a function
 * of its arguments (and one environment variable) so a unit test can drive it: the channel count,
 * FABRIC_LINK_GBPS and the link speeds, a message too large for a NIC, the yield rule, libjsig.
 * The doctor (io.efabench.launch.Doctor) asks the link question too.
 */
public final class TrialChecks {
    private TrialChecks() {}

    static int parseChannels(String p) {
        if (p == null || p.equals("auto")) {
            return 0;
        }
        try {
            int n = Integer.parseInt(p.trim());
            if (n >= 1 && n <= 64) {
                return n;
            }
        } catch (NumberFormatException ignored) {
            // falls through to the one-line error
        }
        throw new BenchmarkSetupException("channels=" + p + ": must be 'auto' or a whole number from 1 to 64");
    }

    public static double linkOverrideGbps() {
        String v = System.getenv("FABRIC_LINK_GBPS");
        if (v == null || v.isBlank()) {
            return 0;
        }
        try {
            double g = Double.parseDouble(v.trim());
            if (g > 0 && !Double.isInfinite(g)) {
                return g;
            }
        } catch (NumberFormatException ignored) {
            // one-line error below
        }
        throw new BenchmarkSetupException("FABRIC_LINK_GBPS=" + v + ": must be a positive number (Gbps per NIC)");
    }

    /**
     * Sum over the distinct NICs of {@code nics} of {@code overrideGbps} (FABRIC_LINK_GBPS, per
     * NIC, replacing what the provider reports) when positive, else of the speed each reports where
     * it counts ({@link #countedLinkGbps}); 0 (unknown: no busbw_pct) when any does not.
     */
    static double linkGbps(List<NicInfo> nics, double overrideGbps, InstanceType instance) {
        Set<String> seen = new LinkedHashSet<>();
        double sum = 0;
        for (NicInfo nic : nics) {
            if (seen.add(nic.domainName())) {
                double g = overrideGbps > 0 ? overrideGbps : countedLinkGbps(nic, instance);
                if (g <= 0) {
                    return 0;
                }
                sum += g;
            }
        }
        return sum;
    }

    /**
     * A NIC's reported speed where it counts for busbw_pct: where plausible ({@link
     * NicInfo#plausibleLinkGbps()}), and for efa only where it matches the published rate of this
     * instance type's EFA NICs ({@link InstanceType}); else 0.
     */
    static double countedLinkGbps(NicInfo nic, InstanceType instance) {
        double g = nic.plausibleLinkGbps();
        return unverifiedLink(nic, instance) == null ? g : 0;
    }

    /**
     * Why {@code nic}'s reported speed is not trusted for busbw_pct, or null when it is: an
     * implausible figure, or an efa speed that the instance type does not confirm.
     */
    public static String unverifiedLink(NicInfo nic, InstanceType instance) {
        double g = nic.plausibleLinkGbps();
        if (g == 0) {
            return "unknown (reported speed outside 1 Gbps..10 Tbps)";
        }
        if (!nic.provider().equals("efa")) {
            return null;
        }
        double expected = instance.efaNicGbps();
        if (expected == 0) {
            return "unverified: efa reports " + fmt(g) + " Gbps and the rate of this " + instance
                    + "'s EFA NICs is not known here; set FABRIC_LINK_GBPS to the NIC's rate for busbw_pct";
        }
        if (Math.abs(g - expected) > 0.5) {
            return "unverified: efa reports " + fmt(g) + " Gbps but a " + instance + "'s EFA NICs run at " + fmt(expected)
                    + " Gbps; set FABRIC_LINK_GBPS=" + fmt(expected) + " for busbw_pct";
        }
        return null;
    }

    private static String fmt(double g) {
        return g == Math.rint(g) ? String.valueOf((long) g) : String.valueOf(g);
    }

    /** The one-line refusal of a {@code bytes} message on {@code nic} whose sends stop at {@code max}, else null. */
    public static String sendTooLarge(long bytes, long max, NicInfo nic) {
        if (max <= 0 || bytes <= max) {
            return null;
        }
        return "size=" + Sizes.label(bytes) + " is larger than the " + max + " bytes one message takes on " + nic.provider()
                + " " + nic.domainName() + " (fabric " + nic.fabricName() + "); use sizes up to " + Sizes.label(max)
                + (nic.fabricName().equals("efa-direct") ? " or the efa fabric (unset EFABENCH_FABRIC)" : "");
    }

    /**
     * Busy-polling waits yield ({@code Deadline}) when this host's ranks outnumber the CPUs they
     * may run on together ({@link TrialLocality#oversubscribed}); EFABENCH_YIELD=0/1 overrides.
     * Recorded in provenance.
     */
    static boolean yieldWhenIdle(boolean oversubscribed) {
        String v = System.getenv("EFABENCH_YIELD");
        if (v != null && !v.isBlank()) {
            return v.trim().equals("1");
        }
        return oversubscribed;
    }

    /**
     * libfabric's shm provider (also loaded by efa for peers on the same node) installs its
     * own SIGSEGV/SIGBUS handlers, which replace the JVM's and crash it at the next implicit
     * null check. Preloading the JDK's libjsig.so chains the handlers; run-jmh.sh does it.
     */
    static void requireSignalChaining(String provider) {
        String preload = System.getenv("LD_PRELOAD");
        boolean chained = preload != null && preload.contains("libjsig");
        if (!chained && (provider.equals("shm") || provider.equals("efa"))
                && !"1".equals(System.getenv("EFABENCH_ALLOW_NO_JSIG"))) {
            throw new BenchmarkSetupException("provider " + provider + " replaces the JVM's signal handlers; run with"
                    + " LD_PRELOAD=$JAVA_HOME/lib/libjsig.so (run-jmh.sh sets it)");
        }
    }
}
