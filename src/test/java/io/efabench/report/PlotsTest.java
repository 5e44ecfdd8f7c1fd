package io.efabench.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PlotsTest {
    @TempDir
    Path tmp;

    @Test
    void writesReadablePngsPerExperiment() throws Exception {
        Path run = Fixtures.runDir(Fixtures.HANDMADE, tmp);
        List<Path> files = new ArrayList<>();
        for (Experiment e : Experiment.of(JmhResults.read(run))) files.addAll(Plots.write(e, run, "tcp, 2 ranks"));
        assertEquals(List.of("write-bandwidth.png", "write-latency.png", "ipc-bandwidth.png", "ipc-latency.png", "ipc-sweep.png"),
                files.stream().map(p -> p.getFileName().toString()).toList());
        for (Path f : files) {
            assertTrue(Files.size(f) > 10_000, f + " is suspiciously small");
            BufferedImage image = ImageIO.read(f.toFile());
            assertEquals(Plots.WIDTH, image.getWidth(), f.toString());
            assertEquals(Plots.HEIGHT, image.getHeight(), f.toString());
            assertTrue(distinctColours(image) > 8, f + " looks blank");
        }
    }

    @Test
    void sweepPicksAtMostFourSizesIncludingTheLargest() {
        assertEquals(List.of(1L, 2L), Plots.sweepSizes(List.of(-1L, 1L, 2L)));
        assertEquals(List.of(1L, 4L, 7L, 10L), Plots.sweepSizes(List.of(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L)));
    }

    private static int distinctColours(BufferedImage image) {
        java.util.Set<Integer> colours = new java.util.HashSet<>();
        for (int y = 0; y < image.getHeight(); y += 7) {
            for (int x = 0; x < image.getWidth(); x += 7) colours.add(image.getRGB(x, y));
        }
        return colours.size();
    }
}
