package io.efabench.harness.ipc;

import io.efabench.harness.BenchmarkSetupException;


/**
 * The {@code shape} param of GPU kernel benchmarks: "GRIDxBLOCK", where GRID is a block count
 * ("128") or a multiple of the GPU's SM count ("2sm" = 2 x SMs), resolved at setup.
 *
 * @param grid  blocks
 * @param block threads per block
 */
record LaunchShape(int grid, int block) {

    static LaunchShape parse(String text, int smCount, int maxThreadsPerBlock) {
        String s = text == null ? "" : text.trim().toLowerCase();
        int x = s.indexOf('x');
        if (x <= 0 || x == s.length() - 1) {
            throw bad(text, "it is not GRIDxBLOCK");
        }
        String g = s.substring(0, x);
        String b = s.substring(x + 1);
        int grid;
        int block;
        try {
            grid = g.endsWith("sm") ? Math.multiplyExact(g.length() == 2 ? 1 : Integer.parseInt(g.substring(0, g.length() - 2)), smCount)
                    : Integer.parseInt(g);
            block = Integer.parseInt(b);
        } catch (NumberFormatException | ArithmeticException e) {
            throw bad(text, "GRID is a number or Nsm, BLOCK a number");
        }
        if (grid < 1 || grid > 1 << 24) {
            throw bad(text, "the grid must be 1.." + (1 << 24) + " blocks");
        }
        if (block < 1 || block > maxThreadsPerBlock) {
            throw bad(text, "the block must be 1.." + maxThreadsPerBlock + " threads on this GPU");
        }
        return new LaunchShape(grid, block);
    }

    private static BenchmarkSetupException bad(String text, String why) {
        return new BenchmarkSetupException("shape '" + text + "' is not a launch shape: " + why
                + " (examples: 128x256, 1smx1024, 2smx512; Nsm = N x the GPU's SM count)");
    }

    @Override
    public String toString() {
        return grid + "x" + block;
    }
}
