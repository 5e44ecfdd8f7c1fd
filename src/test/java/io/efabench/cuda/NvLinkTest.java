package io.efabench.cuda;

import static io.efabench.cuda.GpuTest.assumeTwoGpus;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class NvLinkTest {

    @Test
    void busIdsOfBothFormatsParse() {
        assertArrayEquals(new int[] {0, 0x18, 0}, NvLink.parseBusId("0000:18:00.0"));
        assertArrayEquals(new int[] {0, 0xb5, 0x1f}, NvLink.parseBusId("00000000:B5:1F.0"));
    }

    @Test
    void thePairSpeedIsReadOrTheReasonGiven() {
        assumeTwoGpus();
        CudaDevice a = CudaDevice.get(0);
        CudaDevice b = CudaDevice.get(1);
        NvLink link = NvLink.between(a, b.pciBusId());
        System.out.println("NvLinkTest: " + link);
        assertFalse(link.detail().isBlank());
        if (link.known()) {
            assertTrue(link.links() > 0 && link.links() <= link.activeLinks(), link.toString());
            assertEquals(link.gbytesPerSec() * 8, link.gbps(), 1e-9);
            // NVLink 1..5 links run 20..50 GB/s each way
            double perLink = link.gbytesPerSec() / link.links();
            assertTrue(perLink >= 10 && perLink <= 100, "per-link " + perLink + " GB/s");
        }
    }
}
