package io.efabench.cuda;

/**
 * A failed CUDA driver or NVRTC call: the call (with the arguments that matter), the result
 * code, and the driver's own name and text for it (cuGetErrorName / cuGetErrorString).
 * Also used for CUDA setup problems that have no result code (code -1), such as a local rank
 * without a visible GPU.
 */
public class CudaException extends RuntimeException {
    private final String call;
    private final int code;

    public CudaException(String call, int code, String message) {
        super(message);
        this.call = call;
        this.code = code;
    }

    /** The call that failed, e.g. {@code cuMemAlloc(1099511627776 bytes)}. */
    public String call() {
        return call;
    }

    /** The CUresult (or nvrtcResult), or -1 when the problem is not a failed call. */
    public int code() {
        return code;
    }
}
