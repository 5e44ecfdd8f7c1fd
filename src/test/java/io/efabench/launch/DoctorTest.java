package io.efabench.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.efabench.topology.Sysfs;
import io.efabench.topology.SysfsFixture;

/** The doctor's checks on fixture trees (sysfs, /proc, /dev/shm) and its JSON, without a run. */
class DoctorTest {
    @TempDir
    Path tmp;

    private HostChecks host(Path sysfs) {
        return new HostChecks(new Sysfs(sysfs), tmp.resolve("proc"), tmp.resolve("shm"));
    }

    /** p5.48xlarge: each GPU's four EFAs under its own PCIe switch, GPUs 0-3 on NUMA node 0, 4-7 on 1. */
    @Test
    void onAP5EachGpuTakesTheFourNicsUnderItsSwitchAndItsNumaNode() {
        SysfsFixture p5 = SysfsFixture.p5(tmp.resolve("p5"));
        DoctorCheck c = host(p5.root()).placement();
        assertEquals(DoctorCheck.Status.PASS, c.status(), c.line());
        assertEquals("8 GPU(s), 32 RDMA NIC(s); one rank per GPU takes:", c.detail());
        assertEquals(8, c.rows().size(), c.rows().toString());
        assertEquals("GPU 0 0000:4f:00.0 NUMA 0 -> rdmap80s0 0000:50:00.0, rdmap81s0 0000:51:00.0, rdmap82s0 0000:52:00.0,"
                + " rdmap83s0 0000:53:00.0 [pcie-switch of GPU 0000:4f:00.0]", c.rows().get(0));
        assertTrue(c.rows().get(4).startsWith("GPU 4 0000:90:00.0 NUMA 1 -> rdmap145s0 0000:91:00.0, rdmap146s0"),
                c.rows().get(4));
    }

    @Test
    void onAP5enEachGpuTakesTwoNics() {
        SysfsFixture p5en = SysfsFixture.p5en(tmp.resolve("p5en"));
        HostChecks h = host(p5en.root());
        DoctorCheck c = h.placement();
        assertEquals("8 GPU(s), 16 RDMA NIC(s); one rank per GPU takes:", c.detail());
        assertEquals("GPU 7 0000:c0:00.0 NUMA 1 -> rdmap193s0 0000:c1:00.0, rdmap194s0 0000:c2:00.0"
                + " [pcie-switch of GPU 0000:c0:00.0]", c.rows().get(7));
        assertEquals(2, h.nicsPerRank);
    }

    @Test
    void aLibfabricDirectoryWithoutTheLibraryFailsWithTheFixOnTheLine() {
        DoctorCheck c = new FabricChecks(io.efabench.topology.InstanceType.UNKNOWN).library(tmp.resolve("none").toString());
        assertEquals(DoctorCheck.Status.FAIL, c.status());
        assertTrue(c.line().startsWith("FAIL  libfabric        --libfabric " + tmp.resolve("none") + ": no libfabric.so.1 there"),
                c.line());
        assertTrue(c.line().contains("; fix: install libfabric"), c.line());
        assertEquals(1, c.line().lines().count());
    }

    @Test
    void nodeSettingsThatHurtShmAndEfaAreWarnedWithTheirFix() throws Exception {
        Path proc = tmp.resolve("proc");
        Files.createDirectories(proc.resolve("sys/kernel/yama"));
        Files.writeString(proc.resolve("sys/kernel/yama/ptrace_scope"), "1\n");
        Files.writeString(proc.resolve("meminfo"), "MemTotal: 1 kB\nHugePages_Total:       0\nHugepagesize:       2048 kB\n");
        Path shm = Files.createDirectories(tmp.resolve("shm"));
        Files.writeString(shm.resolve("2147483646:0:1"), "x"); // no process has that pid
        Files.writeString(shm.resolve(ProcessHandle.current().pid() + ":0:1"), "x"); // a live one's: not a leftover
        HostChecks h = host(tmp.resolve("sys"));
        DoctorCheck ptrace = h.ptraceScope();
        assertEquals(DoctorCheck.Status.WARN, ptrace.status());
        assertTrue(ptrace.line().endsWith("; fix: sudo sysctl -w kernel.yama.ptrace_scope=0"), ptrace.line());
        assertEquals(DoctorCheck.Status.WARN, h.hugePages("efa").status());
        assertEquals(DoctorCheck.Status.PASS, h.hugePages("tcp").status());
        DoctorCheck left = h.leftovers();
        assertEquals(DoctorCheck.Status.WARN, left.status(), left.line());
        assertTrue(left.detail().startsWith("1 file(s) of dead processes") && left.detail().contains("2147483646:0:1"), left.line());
    }

    /** --json: one object whose checks a program reads; any FAIL makes the exit status 1. */
    @Test
    void theJsonReportParsesAndCarriesEveryCheckWithItsFix() throws Exception {
        Path state = tmp.resolve("state.json");
        assertEquals(1, Doctor.run(new String[] {"checks", state.toString(), "--quiet", "--libfabric", "/no/such/dir"}));
        Path run = Files.createDirectories(tmp.resolve("run"));
        Files.copy(Path.of("src/test/resources/io/efabench/report/real-write.json"), run.resolve("jmh.json"));
        String out = capture(() -> Doctor.run(new String[] {"finish", state.toString(), "--json", run.toString(),
                "failed:SendRecvBenchmark (log: x)"}));
        JsonArray checks = JsonParser.parseString(out).getAsJsonObject().getAsJsonArray("checks");
        JsonObject lib = find(checks, "libfabric");
        assertEquals("FAIL", lib.get("status").getAsString());
        assertTrue(lib.get("fix").getAsString().startsWith("install libfabric"), lib.toString());
        assertEquals("PASS", find(checks, "node").get("status").getAsString());
        JsonObject write = find(checks, "smoke-write");
        assertTrue(write.get("detail").getAsString().matches("WriteBenchmark SinglePin 256K over \\S+: \\d+\\.\\d\\d Gbps.*% of link.*"),
                write.toString());
        assertEquals("FAIL", find(checks, "smoke").get("status").getAsString());
        for (JsonElement e : checks) {
            JsonObject c = e.getAsJsonObject();
            assertTrue(c.get("status").getAsString().equals("PASS") || c.has("fix"), "a non-pass without a fix: " + c);
        }
    }

    private static JsonObject find(JsonArray checks, String name) {
        for (JsonElement e : checks) {
            if (e.getAsJsonObject().get("name").getAsString().equals(name)) {
                return e.getAsJsonObject();
            }
        }
        throw new AssertionError("no check " + name + " in " + checks);
    }

    private static String capture(java.util.function.IntSupplier step) {
        PrintStream old = System.out;
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        System.setOut(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        try {
            step.getAsInt();
        } finally {
            System.setOut(old);
        }
        return bytes.toString(StandardCharsets.UTF_8);
    }

    @Test
    void theSmokeRunIsWriteAndSendRecvAtOneSizeOnTheMemoryARunTakes() {
        JsonObject s = new JsonObject();
        s.addProperty("provider", "efa");
        s.addProperty("device", true);
        List<String> lines = Doctor.smokeLines(s);
        assertEquals("efa", lines.get(0));
        assertTrue(lines.get(1).startsWith("WriteBenchmark -p config=SingleDMA -p size=1M"), lines.toString());
        assertTrue(lines.get(2).startsWith("SendRecvBenchmark -p config=SingleDevice -p size=1M"), lines.toString());
    }
}
