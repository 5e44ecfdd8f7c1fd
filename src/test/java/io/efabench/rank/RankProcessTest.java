package io.efabench.rank;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Ranks as real JVM processes on loopback: a killed rank must fail the others quickly, naming it. */
class RankProcessTest {
    /** The others must notice a death well before any rendezvous deadline (20 s here). */
    private static final Duration NOTICE = Duration.ofSeconds(5);

    @TempDir
    Path dir;

    private final List<Process> started = new ArrayList<>();

    @AfterEach
    void killLeftovers() {
        started.forEach(Process::destroyForcibly);
    }

    private record Rank(int rank, Process process, Path out, Path err) {
        String stdout() throws IOException {
            return Files.readString(out);
        }

        String stderr() throws IOException {
            return Files.readString(err);
        }
    }

    private List<Rank> launch(int size, String... args) throws IOException {
        int port = RankGroupTest.freePort();
        String java = ProcessHandle.current().info().command().orElse("java");
        String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<Rank> ranks = new ArrayList<>();
        for (int r = 0; r < size; r++) {
            List<String> command = new ArrayList<>(List.of(java, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
                    "-Xmx64m", "-cp", classpath, RankProcessMain.class.getName()));
            command.addAll(List.of(args));
            ProcessBuilder pb = new ProcessBuilder(command);
            pb.environment().put("RANK", Integer.toString(r));
            pb.environment().put("WORLD_SIZE", Integer.toString(size));
            pb.environment().put("MASTER_ADDR", "127.0.0.1");
            pb.environment().put("MASTER_PORT", Integer.toString(port));
            pb.environment().put("EFABENCH_TIMEOUT_S", "20");
            Path out = dir.resolve("rank" + r + ".out");
            Path err = dir.resolve("rank" + r + ".err");
            pb.redirectOutput(out.toFile()).redirectError(err.toFile());
            Process p = pb.start();
            started.add(p);
            ranks.add(new Rank(r, p, out, err));
        }
        return ranks;
    }

    private static void awaitJoined(List<Rank> ranks) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        for (Rank r : ranks) {
            while (!r.stdout().contains("JOINED rank " + r.rank())) {
                if (!r.process().isAlive()) {
                    fail("rank " + r.rank() + " exited " + r.process().exitValue() + " before joining: " + r.stderr());
                }
                if (System.nanoTime() > deadline) {
                    fail("rank " + r.rank() + " did not join: " + r.stderr());
                }
                Thread.sleep(20);
            }
        }
    }

    /** Kills the victim, then returns each survivor's stderr after checking it exited 3 in time. */
    private static List<String> killAndCollect(List<Rank> ranks, int victim) throws Exception {
        awaitJoined(ranks);
        Thread.sleep(200); // let the survivors reach their barrier / poll loop
        long killed = System.nanoTime();
        ranks.get(victim).process().destroyForcibly();
        List<String> errors = new ArrayList<>();
        for (Rank r : ranks) {
            if (r.rank() == victim) {
                continue;
            }
            assertTrue(r.process().waitFor(NOTICE.toMillis() * 2, TimeUnit.MILLISECONDS),
                    "rank " + r.rank() + " still runs after rank " + victim + " was killed");
            long tookMillis = (System.nanoTime() - killed) / 1_000_000;
            assertEquals(3, r.process().exitValue(), "rank " + r.rank() + ": " + r.stderr());
            assertTrue(tookMillis < NOTICE.toMillis(), "rank " + r.rank() + " noticed after " + tookMillis + " ms");
            errors.add(r.stderr().strip());
        }
        return errors;
    }

    @Test
    void killingAFollowerFailsTheOthersNamingIt() throws Exception {
        List<Rank> ranks = launch(3, "hold", "1");
        long victimPid = ranks.get(1).process().pid();
        List<String> errors = killAndCollect(ranks, 1);
        String death = "rank 1 (host " + Rendezvous.hostname() + " pid " + victimPid + ") disconnected";
        // rank 0 was blocked in a barrier, rank 2 was busy-polling checkAlive()
        assertTrue(errors.get(0).startsWith("FAILED: rank 0: barrier \"work\" failed: " + death), errors.get(0));
        assertTrue(errors.get(1).startsWith("FAILED: " + death), errors.get(1));
        for (String e : errors) {
            assertTrue(e.endsWith("its process probably died"), e);
        }
    }

    @Test
    void killingTheLeaderFailsTheFollowersNamingIt() throws Exception {
        List<Rank> ranks = launch(3, "hold", "0");
        List<String> errors = killAndCollect(ranks, 0);
        assertTrue(errors.get(0).matches("FAILED: rank 1: barrier \"work\" failed: rank 0 \\(leader\\) at 127\\.0\\.0\\.1:\\d+ disconnected.*"),
                errors.get(0));
        assertTrue(errors.get(1).matches("FAILED: rank 0 \\(leader\\) at 127\\.0\\.0\\.1:\\d+ disconnected.*"),
                errors.get(1));
    }

    @Test
    void aNormalRunEndsCleanlyOnEveryRank() throws Exception {
        List<Rank> ranks = launch(2, "clean");
        for (Rank r : ranks) {
            assertTrue(r.process().waitFor(30, TimeUnit.SECONDS), "rank " + r.rank() + " did not finish");
            assertEquals(0, r.process().exitValue(), "rank " + r.rank() + ": " + r.stderr());
            assertTrue(r.stdout().contains("OK rank " + r.rank()), r.stdout());
            assertEquals("", r.stderr().strip());
        }
    }
}
