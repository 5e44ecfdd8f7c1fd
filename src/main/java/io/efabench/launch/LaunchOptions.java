package io.efabench.launch;

import java.util.List;
import java.util.regex.Pattern;

/**
 * The launcher's own options, read before JMH's; each refusal is one line (exit 2):
 * {@code ./run-jmh.sh [--ranks N] [--provider P] [--profile] [--help] [--] JMH_ARGS...} and
 * {@code ./run-jmh.sh seed EXP [--sizes S] [--provider P] [-- JMH_ARGS...]}.
 */
final class LaunchOptions {
    static final String SEED_USAGE =
            "usage: ./run-jmh.sh seed write|sendrecv|all2all|proxy|ipc [--sizes all|quick|LIST] [--provider P] [-- JMH args]";
    /** libfabric names, layered ones like tcp;ofi_rxm included. */
    private static final Pattern PROVIDER = Pattern.compile("[A-Za-z0-9_;+.-]+");

    /** A run's options: {@code ranks} and {@code provider} null where not given. */
    record Run(Integer ranks, String provider, boolean profile, boolean help, List<String> jmhArgs) {}

    /** The seed's options: {@code provider} null or empty where not given. */
    record SeedRun(String experiment, String sizes, String provider, List<String> jmhArgs) {}

    private LaunchOptions() {}

    static Run run(List<String> args) {
        Integer ranks = null;
        String provider = null;
        boolean profile = false;
        int i = 0;
        for (; i < args.size(); i++) {
            String a = args.get(i);
            if (a.equals("--ranks") || a.startsWith("--ranks=")) {
                String v = a.equals("--ranks") ? next(args, i++, "--ranks needs a value (a positive integer)") : a.substring(8);
                if (!v.matches("[1-9][0-9]{0,3}")) {
                    throw new IllegalArgumentException("--ranks needs a positive integer, got '" + v + "'");
                }
                ranks = Integer.valueOf(v);
            } else if (a.equals("--provider") || a.startsWith("--provider=")) {
                provider = a.equals("--provider") ? next(args, i++, "--provider needs a value (tcp, shm, efa, ...)") : a.substring(11);
                checkProvider(provider);
            } else if (a.equals("--profile")) {
                profile = true;
            } else if (a.equals("--help")) {
                return new Run(ranks, provider, profile, true, List.of());
            } else if (a.equals("--")) {
                i++;
                break;
            } else if (a.startsWith("--")) {
                throw new IllegalArgumentException("unknown option " + a
                        + " (launcher options: --ranks N, --provider P, --profile; JMH options use one dash; see --help)");
            } else {
                break;
            }
        }
        return new Run(ranks, provider, profile, false, List.copyOf(args.subList(i, args.size())));
    }

    static SeedRun seed(List<String> args) {
        if (args.isEmpty()) {
            throw new IllegalArgumentException(SEED_USAGE);
        }
        String sizes = "all";
        String provider = null;
        int i = 1;
        for (; i < args.size(); i++) {
            String a = args.get(i);
            if (a.equals("--sizes")) {
                sizes = next(args, i++, "--sizes needs all, quick or a list of the seed's sizes");
            } else if (a.startsWith("--sizes=")) {
                sizes = a.substring(8);
            } else if (a.equals("--provider")) {
                provider = next(args, i++, "--provider needs a value");
            } else if (a.startsWith("--provider=")) {
                provider = a.substring(11);
            } else if (a.equals("--")) {
                i++;
                break;
            } else {
                throw new IllegalArgumentException(SEED_USAGE);
            }
        }
        if (provider != null && !provider.isEmpty()) {
            checkProvider(provider);
        }
        return new SeedRun(args.getFirst(), sizes, provider, List.copyOf(args.subList(Math.min(i, args.size()), args.size())));
    }

    static void checkProvider(String name) {
        if (!PROVIDER.matcher(name).matches()) {
            throw new IllegalArgumentException("--provider needs a provider name (tcp, shm, efa, ...), got '" + name + "'");
        }
    }

    /** The value after option {@code i}, or the refusal {@code missing}. */
    private static String next(List<String> args, int i, String missing) {
        if (i + 1 >= args.size()) {
            throw new IllegalArgumentException(missing);
        }
        return args.get(i + 1);
    }
}
