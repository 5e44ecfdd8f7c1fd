package io.efabench.harness;

/** Where a benchmark's payload buffers live. */
public enum MemoryKind {
    /**
     * Page-aligned host memory ("Pin" in the seed's config names), registered as
     * FI_HMEM_SYSTEM; on a machine with a GPU also page-locked with cuMemHostRegister, like the
     * seed's pinned buffers.
     */
    HOST,
    /**
     * CUDA device memory ("DMA" / "Device"): cuMemAlloc, registered with FI_HMEM_CUDA through
     * DMA-BUF where the provider and API take it, else by virtual address.
     */
    DEVICE
}
