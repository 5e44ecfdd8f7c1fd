package io.efabench.fabric;

import io.efabench.fabric.generated.LibFabric;
import io.efabench.fabric.generated.fi_mr_attr;
import io.efabench.fabric.generated.fi_mr_dmabuf;
import io.efabench.fabric.generated.fi_ops_mr;
import io.efabench.fabric.generated.fid_domain;
import io.efabench.fabric.generated.fid_mr;
import io.efabench.fabric.generated.iovec;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The memory regions of one {@link Channel}: the one registration path (host memory, CUDA memory
 * by virtual address or through a DMA-BUF) and the regions it made, which close with the channel,
 * after its endpoint and before its domain. Apart from posting: nothing here is on a hot path.
 */
final class Registrations {
    private static final long ACCESS = Fi.SEND | Fi.RECV | Fi.READ | Fi.WRITE | Fi.REMOTE_READ | Fi.REMOTE_WRITE;
    /** Keys we pick where the provider does not (no FI_MR_PROV_KEY): unique within a domain, so within the process. */
    private static final AtomicLong NEXT_KEY = new AtomicLong(1);

    private final NicInfo nic;
    private final long mrMode;
    private final List<MemoryRegion> regions = new ArrayList<>();

    Registrations(NicInfo nic, long mrMode) {
        this.nic = nic;
        this.mrMode = mrMode;
    }

    /** How a buffer reaches the provider. */
    enum Source {
        HOST("host memory"), CUDA_VA("CUDA memory"), CUDA_DMABUF("CUDA memory via DMA-BUF");

        final String text;

        Source(String text) {
            this.text = text;
        }
    }

    /**
     * The one registration path: fi_mr_regattr on {@code domain}, then bind/enable to {@code ep}
     * where FI_MR_ENDPOINT asks for it, key and remote address per mr_mode. The region belongs to
     * {@code owner} (it deregisters through it) and is closed with the others by {@link #closeAll}.
     */
    MemoryRegion register(Object owner, MemorySegment domain, MemorySegment ep, int apiVersion, MemorySegment buf,
            Source source, int cudaDevice, int dmabufFd, long dmabufOffset) {
        if (buf.byteSize() == 0) {
            throw new IllegalArgumentException("cannot register an empty buffer");
        }
        String where = nic.provider() + " " + nic.domainName();
        if (source == Source.CUDA_DMABUF && !Fi.atLeast(apiVersion, Fi.DMABUF_VERSION)) {
            // Before any native call: an older library would read attr.dmabuf, which shares its
            // slot with mr_iov, as an iovec pointer and register garbage.
            throw new DmaBufUnsupportedException(Fi.apiTooOld(Fi.DMABUF_VERSION, "DMA-BUF registration on " + where), 0);
        }
        if (source != Source.HOST && !nic.offersHmem()) {
            // Without FI_HMEM in the domain's caps libfabric silently registers as FI_HMEM_SYSTEM.
            throw new FabricException(where + " was discovered without FI_HMEM; use Discovery.discover(true)");
        }
        // Without FI_MR_PROV_KEY the application picks keys, unique within the domain.
        long requestedKey = (mrMode & Fi.MR_PROV_KEY) != 0 ? 0 : NEXT_KEY.getAndIncrement();
        String op = "fi_mr_regattr(" + source.text + ", " + buf.byteSize() + " bytes"
                + (source == Source.HOST ? "" : ", device " + cudaDevice) + ") on " + where;
        MemorySegment mr;
        try (Arena arena = Arena.ofConfined()) {
            // Zeroed: fields the API version in use does not know stay 0, as older code would leave them.
            MemorySegment attr = arena.allocate(fi_mr_attr.layout());
            // Device-only memory (cuMemAlloc, not managed): shm moves it by CUDA IPC only with this
            // flag (smr_select_proto); without it every transfer is staged through host bounce
            // buffers, a small fraction of the IPC rate (docs/perf/journal/device-memory.md). fabtests set it too.
            long flags = source == Source.HOST ? 0 : Fi.HMEM_DEVICE_ONLY;
            if (source == Source.CUDA_DMABUF) {
                MemorySegment dmabuf = arena.allocate(fi_mr_dmabuf.layout());
                fi_mr_dmabuf.fd(dmabuf, dmabufFd);
                fi_mr_dmabuf.offset(dmabuf, dmabufOffset);
                fi_mr_dmabuf.len(dmabuf, buf.byteSize());
                fi_mr_dmabuf.base_addr(dmabuf, MemorySegment.ofAddress(buf.address() - dmabufOffset));
                fi_mr_attr.dmabuf(attr, dmabuf);
                flags |= Fi.MR_DMABUF;
            } else {
                MemorySegment iov = arena.allocate(iovec.layout());
                iovec.iov_base(iov, buf);
                iovec.iov_len(iov, buf.byteSize());
                fi_mr_attr.mr_iov(attr, iov);
            }
            fi_mr_attr.iov_count(attr, 1);
            fi_mr_attr.access(attr, ACCESS);
            fi_mr_attr.requested_key(attr, requestedKey);
            fi_mr_attr.iface(attr, source == Source.HOST ? LibFabric.FI_HMEM_SYSTEM() : LibFabric.FI_HMEM_CUDA());
            fi_mr_attr.device.cuda(fi_mr_attr.device(attr), source == Source.HOST ? 0 : cudaDevice);
            MemorySegment out = arena.allocate(ValueLayout.ADDRESS);
            MemorySegment mrOps = fid_domain.mr(domain).reinterpret(fi_ops_mr.sizeof());
            int rc = fi_ops_mr.regattr.invoke(fi_ops_mr.regattr(mrOps), domain, attr, flags, out);
            if (source == Source.CUDA_DMABUF && dmaBufRefused(rc)) {
                throw new DmaBufUnsupportedException("DMA-BUF registration refused by " + where + ": "
                        + op + " failed: " + Fi.strerror(rc) + " (" + rc + ")", rc);
            }
            Fi.check(op, rc);
            mr = out.get(ValueLayout.ADDRESS, 0).reinterpret(fid_mr.sizeof());
        }
        try {
            if ((mrMode & Fi.MR_ENDPOINT) != 0) {
                Fi.bind("fi_mr_bind", mr, ep, 0);
                Fi.enable("fi_mr_enable", mr);
            }
        } catch (RuntimeException e) {
            Fi.close(mr);
            throw e;
        }
        long key = fid_mr.key(mr); // fi_mr_key: the provider's key, or ours echoed back
        long base = (mrMode & Fi.MR_VIRT_ADDR) != 0 ? buf.address() : 0;
        MemoryRegion region = new MemoryRegion(owner, this::deregister, buf, mr, fid_mr.mem_desc(mr).address(),
                new RemoteRegion(base, buf.byteSize(), key));
        regions.add(region);
        return region;
    }

    /**
     * Any failure of a DMA-BUF registration falls back to registration by virtual address (the
     * caller records the refusal in provenance): "no FI_HMEM" is refused before any native call
     * ({@link Channel#offersHmem}), and what else a provider returns is not a fixed set. util and shm
     * return -FI_ENOSYS (CUDA iface not initialised: libfabric built without CUDA); efa returns
     * -FI_EBADFLAGS below API 1.20 and otherwise the raw -errno of ibv_reg_dmabuf_mr
     * (prov/efa/src/efa_mr.c:470-488 in 2.6: -EOPNOTSUPP without rdma-core or kernel support, and
     * -EINVAL, -EFAULT, -ENOMEM ... where the kernel or the GPU driver refuses this buffer).
     */
    static boolean dmaBufRefused(int rc) {
        return rc < 0;
    }

    void deregister(MemoryRegion region) {
        regions.remove(region);
        int rc = region.closeFid();
        if (rc != 0) {
            throw Fi.failure("fi_close(mr)", rc);
        }
    }

    /** Closes every region still open; returns {@code first}, or the first close failure when there was none. */
    FabricException closeAll(FabricException first) {
        for (MemoryRegion r : List.copyOf(regions)) {
            int rc = r.closeFid();
            if (rc != 0 && first == null) {
                first = Fi.failure("fi_close(mr)", rc);
            }
        }
        regions.clear();
        return first;
    }
}
