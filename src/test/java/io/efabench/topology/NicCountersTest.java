package io.efabench.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NicCountersTest {
    @TempDir
    Path root;

    private void counter(String device, int port, String dir, String name, long value) throws Exception {
        Path d = root.resolve("class/infiniband").resolve(device).resolve("ports").resolve(Integer.toString(port)).resolve(dir);
        Files.createDirectories(d);
        Files.writeString(d.resolve(name), value + "\n");
    }

    /** EFA: hw_counters/tx_bytes + rx_bytes of every port of every device behind the domains, read again after traffic. */
    @Test
    void efaDevicesSumTheirPortsBytes() throws Exception {
        counter("rdmap16s27", 1, "hw_counters", "tx_bytes", 1000);
        counter("rdmap16s27", 1, "hw_counters", "rx_bytes", 24);
        counter("rdmap32s27", 1, "hw_counters", "tx_bytes", 5);
        counter("rdmap32s27", 1, "hw_counters", "rx_bytes", 5);
        NicCounters c = NicCounters.of(new Sysfs(root), List.of("rdmap16s27-rdm", "rdmap32s27-rdm", "rdmap16s27-rdm"))
                .orElseThrow();
        assertEquals(1034, c.bytes());
        counter("rdmap16s27", 1, "hw_counters", "tx_bytes", 1000 + (1 << 20));
        assertEquals(1034 + (1 << 20), c.bytes(), "a new read sees the traffic");
        assertEquals(2, c.describe().size());
    }

    /** InfiniBand's standard counters count 4-byte words. */
    @Test
    void verbsDevicesUseThePortDataWords() throws Exception {
        counter("mlx5_0", 1, "counters", "port_xmit_data", 250);
        counter("mlx5_0", 1, "counters", "port_rcv_data", 10);
        assertEquals(1040, NicCounters.of(new Sysfs(root), List.of("mlx5_0")).orElseThrow().bytes());
    }

    @Test
    void noCountersNoRatio() throws Exception {
        assertTrue(NicCounters.of(new Sysfs(root), List.of("eth0")).isEmpty(), "tcp's NIC has no RDMA counters");
        Files.createDirectories(root.resolve("class/infiniband/rdmap1s0/ports/1"));
        assertTrue(NicCounters.of(new Sysfs(root), List.of("rdmap1s0-rdm")).isEmpty(), "a port without byte counters");
        counter("rdmap2s0", 1, "hw_counters", "tx_bytes", 1);
        counter("rdmap2s0", 1, "hw_counters", "rx_bytes", 1);
        assertTrue(NicCounters.of(new Sysfs(root), List.of("rdmap2s0-rdm", "eth0")).isEmpty(),
                "every NIC counted or none: a partial sum would be a wrong ratio");
    }

    @Test
    void domainNamesMapToDevices() {
        assertEquals("rdmap16s27", NicCounters.deviceOf("rdmap16s27-rdm"));
        assertEquals("rdmap16s27", NicCounters.deviceOf("rdmap16s27-dgrm"));
        assertEquals("mlx5_0", NicCounters.deviceOf("mlx5_0"));
    }
}
