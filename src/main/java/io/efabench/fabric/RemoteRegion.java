package io.efabench.fabric;

import java.nio.ByteBuffer;

/**
 * What a peer needs to write into a registered region: the address the provider expects for
 * offset 0 (the buffer's virtual address under FI_MR_VIRT_ADDR, else 0), its length and key.
 */
public record RemoteRegion(long base, long length, long key) {
    public static final int ENCODED_SIZE = 3 * Long.BYTES;

    /** Target address of {@code offset} inside the region, as fi_rma_iov.addr wants it. */
    public long address(long offset) {
        return base + offset;
    }

    public byte[] encode() {
        return ByteBuffer.allocate(ENCODED_SIZE).putLong(base).putLong(length).putLong(key).array();
    }

    public static RemoteRegion decode(byte[] bytes) {
        if (bytes.length != ENCODED_SIZE) {
            throw new IllegalArgumentException("remote region: expected " + ENCODED_SIZE + " bytes, got " + bytes.length);
        }
        ByteBuffer b = ByteBuffer.wrap(bytes);
        return new RemoteRegion(b.getLong(), b.getLong(), b.getLong());
    }
}
