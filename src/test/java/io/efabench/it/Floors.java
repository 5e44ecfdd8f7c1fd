package io.efabench.it;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Lower bounds on testbed figures. A figure can fall under its floor by chance on a 2-core machine
 * (another process, the VM's host), never rise over a link by chance: so an upper bound is asserted
 * inside the attempt, at once and for good, while a floor that misses is measured again, ground
 * truth included, at most {@code attempts} times, and every attempt is printed.
 */
final class Floors {
    private Floors() {
    }

    /** {@code value} (Gbps) must be at least {@code floor}; {@code basis} says what the floor is made of. */
    record Floor(String what, double value, double floor, String basis) {
        boolean holds() {
            return value >= floor;
        }

        @Override
        public String toString() {
            return String.format(Locale.ROOT, "%s %.4f %s %.4f (%s)", what, value, holds() ? ">=" : "BELOW", floor, basis);
        }
    }

    /** One attempt's floors and what to print if the last attempt misses (logs, figures). */
    record Measured(List<Floor> floors, String context) {
    }

    interface Attempt {
        /** Runs the measurement once; asserts its upper bounds and correctness itself. */
        Measured run(int attempt) throws Exception;
    }

    /** Runs {@code attempt} until every floor holds, at most {@code attempts} times; fails with every attempt's floors. */
    static void hold(String name, int attempts, Attempt attempt) throws Exception {
        List<String> seen = new ArrayList<>();
        Measured last = null;
        for (int i = 1; i <= attempts; i++) {
            last = attempt.run(i);
            String line = name + " attempt " + i + "/" + attempts + ": " + last.floors();
            System.out.println("floors: " + line);
            seen.add(line);
            if (last.floors().stream().allMatch(Floor::holds)) {
                return;
            }
        }
        throw new AssertionError(name + ": a floor missed in each of " + attempts + " attempts:\n" + String.join("\n", seen)
                + "\nthe last attempt:\n" + last.context());
    }
}
