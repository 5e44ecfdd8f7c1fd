package io.efabench.fabric;

/**
 * DMA-BUF registration ({@link Channel#registerCudaDmaBuf}) is not available: the API version in
 * use is older than 1.20, or the provider refused {@code FI_MR_DMABUF} for lack of support
 * ({@code -FI_ENOSYS}, {@code -FI_EOPNOTSUPP}, {@code -FI_EBADFLAGS}). The caller may fall back
 * to {@link Channel#registerCuda} (virtual-address registration) and record that it did; any
 * other registration failure stays a plain {@link FabricException}.
 */
public final class DmaBufUnsupportedException extends FabricException {
    public DmaBufUnsupportedException(String message, int errno) {
        super(message, errno);
    }
}
