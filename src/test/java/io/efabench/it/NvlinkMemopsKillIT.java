package io.efabench.it;

import java.nio.file.Path;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A dead peer on path=nvlink-ce-memops: memop waits have no clock, so the surviving ranks' hosts
 * must notice the loss, release their own waits (every flag word written here) and exit naming
 * the dead rank. A class of its own: under MPS, run it alone or after restarting MPS (the clients
 * started right after another test killed a rank cannot open a context; journal moe.md).
 */
class NvlinkMemopsKillIT {

    @TempDir
    Path tmp;

    @BeforeAll
    static void needsAGpuAndHmem() {
        Ranks.assumeGpuWithHmem("the NVLink all-to-all's memops path");
    }

    @Test
    void aKilledPeerIsNamedOnTheMemopsPath() throws Exception {
        NvlinkAllToAllIT.killOneOfThree(tmp, "nvlink-ce-memops");
    }
}
