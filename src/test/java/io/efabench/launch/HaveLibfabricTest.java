package io.efabench.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * run-jmh.sh's have_libfabric under pipefail, against an ldconfig that lists libfabric first and
 * then far more than a pipe holds: a `ldconfig -p | grep -q` would see grep exit at the match and
 * ldconfig die of SIGPIPE, and report libfabric missing (as it did now and then under load, and
 * then ran apt-get as root).
 */
class HaveLibfabricTest {
    @TempDir
    Path tmp;

    @Test
    void findsLibfabricInALongLdconfigCacheUnderPipefail() throws Exception {
        Path fake = tmp.resolve("ldconfig");
        Files.writeString(fake, """
                #!/bin/bash
                printf '\\tlibfabric.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libfabric.so.1\\n'
                for i in $(seq 20000); do printf '\\tlibfiller%d.so.1 (libc6,x86-64) => /usr/lib/libfiller.so\\n' "$i"; done
                """);
        fake.toFile().setExecutable(true);
        LauncherFunction.Result r = LauncherFunction.run("have_libfabric",
                "PATH=" + tmp + ":$PATH LD_LIBRARY_PATH= have_libfabric");
        assertEquals(0, r.status(), "have_libfabric missed libfabric.so.1 in the cache: " + r.output());
    }
}
