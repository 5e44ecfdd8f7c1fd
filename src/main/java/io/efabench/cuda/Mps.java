package io.efabench.cuda;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Whether CUDA's Multi-Process Service runs on this node. Ranks that share a GPU without it
 * time-slice it: one process's kernels and copies wait for the other's slice (~2.4 ms on the lent
 * H100: a proxy round of any size took that long), so figures of ranks sharing a GPU mean
 * something only under MPS. The driver tells a client nothing about it, so this looks for the
 * control daemon ({@code nvidia-cuda-mps-control -d}) among the node's processes; clients connect
 * to it through its pipe directory ({@code CUDA_MPS_PIPE_DIRECTORY}, default /tmp/nvidia-mps).
 */
public final class Mps {
    private static final String DAEMON = "nvidia-cuda-mps-control";

    private Mps() {}

    /** True when the MPS control daemon runs on this node. */
    public static boolean running() {
        return running(Path.of("/proc"));
    }

    static boolean running(Path proc) {
        try (DirectoryStream<Path> pids = Files.newDirectoryStream(proc, p -> p.getFileName().toString().matches("\\d+"))) {
            for (Path pid : pids) {
                try {
                    byte[] cmdline = Files.readAllBytes(pid.resolve("cmdline"));
                    int end = 0;
                    while (end < cmdline.length && cmdline[end] != 0) {
                        end++;
                    }
                    String argv0 = new String(cmdline, 0, end, java.nio.charset.StandardCharsets.UTF_8);
                    if (argv0.equals(DAEMON) || argv0.endsWith("/" + DAEMON)) {
                        return true;
                    }
                } catch (IOException gone) {
                    // the process ended while we looked
                }
            }
        } catch (IOException e) {
            return false;
        }
        return false;
    }

    /** Provenance: "on (pipe directory ...)" or "off". */
    public static String describe() {
        if (!running()) {
            return "off";
        }
        String dir = System.getenv("CUDA_MPS_PIPE_DIRECTORY");
        return "on (pipe directory " + (dir == null || dir.isBlank() ? "/tmp/nvidia-mps" : dir) + ")";
    }
}
