package io.efabench.fabric;

/**
 * A libfabric call failed. {@link #errno()} is the negative libfabric error code (for example
 * {@code -FI_ENODATA}), or 0 where the failure is not a libfabric return code. Not final:
 * {@link DmaBufUnsupportedException} marks the one failure a caller is expected to recover from.
 */
public class FabricException extends RuntimeException {
    private final int errno;

    public FabricException(String message) {
        this(message, 0);
    }

    public FabricException(String message, int errno) {
        super(message);
        this.errno = errno;
    }

    public int errno() {
        return errno;
    }
}
