package io.efabench.fabric;

import java.util.Locale;

/**
 * Which way bytes between two ranks of one node may take. libfabric adds {@code FI_LOCAL_COMM} to
 * hints that leave it out, and the efa provider then sends to same-node peers through its hidden
 * shm provider ({@code FI_PROVIDER=efa} does not stop it): those pairs never touch a NIC, yet
 * would be averaged with the ones that do.
 */
public enum NicPath {
    /** Every byte crosses a NIC: NIC providers (efa, verbs) are asked for FI_REMOTE_COMM without FI_LOCAL_COMM. */
    NIC,
    /** What an application gets by default: the provider may take shortcuts (efa: shm) for same-node peers. */
    AUTO;

    /** Variable read when the benchmark has no {@code path} parameter. */
    public static final String ENV = "EFABENCH_PATH";

    /** {@code nic} or {@code auto} (case ignored); a one-line error otherwise. */
    public static NicPath parse(String text, String source) {
        String t = text == null ? "" : text.strip().toLowerCase(Locale.ROOT);
        return switch (t) {
            case "nic" -> NIC;
            case "auto" -> AUTO;
            default -> throw new FabricException(source + "=" + text + ": must be 'nic' (every byte over a NIC) or 'auto'"
                    + " (the provider may use shared memory for peers on the same node)");
        };
    }

    /** {@value #ENV}, else {@link #NIC}. */
    public static NicPath fromEnvironment() {
        String v = System.getenv(ENV);
        return v == null || v.isBlank() ? NIC : parse(v, ENV);
    }

    /**
     * True for providers that drive a NIC and can be told to stay on it: efa and verbs (also as
     * {@code verbs;ofi_rxm}). tcp, shm and the rest have no such choice: for them the path is
     * whatever they are.
     */
    public static boolean isNicProvider(String provider) {
        if (provider == null) {
            return false;
        }
        String first = provider.strip().split("[,;]")[0].strip();
        return first.equals("efa") || first.equals("verbs");
    }

    /** Capability bits this path adds to the hints for {@code provider}. */
    long caps(String provider) {
        return this == NIC && isNicProvider(provider) ? Fi.REMOTE_COMM : 0;
    }

    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
