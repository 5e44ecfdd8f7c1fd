package io.efabench.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

/** Which JMH runs a command makes: the user's (host configs where no GPU is visible), or the quick suite. */
class SuitesTest {

    private static List<String> with(List<String> head, List<String> tail) {
        List<String> all = new ArrayList<>(head);
        all.addAll(tail);
        return all;
    }

    @Test
    void theQuickSuiteWithoutAGpuIsTwoRunsOfHostConfigsIntoOneFolder() {
        Suites.Plan p = Suites.plan(List.of(), false);
        assertEquals(List.of("no GPU visible here: the quick suite runs the host configs, SendRecvBenchmark and WriteBenchmark"
                + " one after the other, into one run folder"), p.notes());
        assertEquals(List.of(
                new Suites.Suite("", with(List.of("SendRecvBenchmark", "-p", "config=SingleHost"), Suites.QUICK_OPTIONS)),
                new Suites.Suite("write", with(List.of("WriteBenchmark", "-p", "config=SinglePin,MultiPin,RoundRobinPin"),
                        Suites.QUICK_OPTIONS))), p.suites());
        Suites.Plan gpu = Suites.plan(List.of(), true);
        assertEquals(List.of(), gpu.notes());
        assertEquals(List.of(new Suites.Suite("", with(List.of("SendRecvBenchmark", "WriteBenchmark"), Suites.QUICK_OPTIONS))),
                gpu.suites());
    }

    @Test
    void theUsersArgumentsGetTheHostConfigsWhereNoGpuIsVisible() {
        List<String> args = List.of("SendRecvBenchmark", "-p", "size=4K");
        Suites.Plan p = Suites.plan(args, false);
        assertEquals(List.of("no GPU visible here: skipping the device configs (SingleDevice); running -p config=SingleHost"),
                p.notes());
        assertEquals(List.of(new Suites.Suite("", with(args, List.of("-p", "config=SingleHost")))), p.suites());
        assertEquals(List.of(new Suites.Suite("", args)), Suites.plan(args, true).suites(), "a GPU: as given");
        List<String> named = List.of("WriteBenchmark", "-p", "config=SingleDMA");
        assertEquals(List.of(new Suites.Suite("", named)), Suites.plan(named, false).suites(), "named configs are the user's");
    }
}
