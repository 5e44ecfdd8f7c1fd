package io.efabench.launch;

import java.util.List;

/**
 * One line of the doctor: a check's name, its verdict, what it found and, for anything but a
 * pass, the fix; {@code rows} are the lines a check lists under it (the GPU -> NIC -> NUMA
 * placement).
 */
record DoctorCheck(String name, Status status, String detail, String fix, List<String> rows) {
    enum Status { PASS, WARN, FAIL }

    DoctorCheck {
        rows = List.copyOf(rows);
        if (status != Status.PASS && (fix == null || fix.isBlank())) {
            throw new IllegalArgumentException(name + ": a " + status + " needs its fix");
        }
    }

    static DoctorCheck pass(String name, String detail) {
        return new DoctorCheck(name, Status.PASS, detail, null, List.of());
    }

    static DoctorCheck warn(String name, String detail, String fix) {
        return new DoctorCheck(name, Status.WARN, detail, fix, List.of());
    }

    static DoctorCheck fail(String name, String detail, String fix) {
        return new DoctorCheck(name, Status.FAIL, detail, fix, List.of());
    }

    DoctorCheck withRows(List<String> more) {
        return new DoctorCheck(name, status, detail, fix, more);
    }

    /** {@code "WARN  shm-size     /dev/shm is 64 MiB; fix: ..."}: one line, the fix on it. */
    String line() {
        return String.format("%-4s  %-16s %s%s", status, name, detail, fix == null ? "" : "; fix: " + fix);
    }
}
