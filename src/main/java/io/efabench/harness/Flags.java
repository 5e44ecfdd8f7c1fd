package io.efabench.harness;

/**
 * A true/false benchmark parameter, read strictly. Such parameters are Strings in the
 * benchmarks: JMH converts a boolean {@code @Param} with Boolean.valueOf, which takes
 * {@code -p inject=yes} as false and labels the result "yes".
 */
public final class Flags {
    private Flags() {}

    /** {@code value} as a boolean, or a one-line error naming the parameter. */
    public static boolean parse(String name, String value) {
        if ("true".equals(value)) {
            return true;
        }
        if ("false".equals(value)) {
            return false;
        }
        throw new BenchmarkSetupException(name + "=" + value + ": must be true or false");
    }
}
