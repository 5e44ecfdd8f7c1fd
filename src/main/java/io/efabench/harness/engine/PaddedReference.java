package io.efabench.harness.engine;

/**
 * A volatile reference alone on its cache lines (128 bytes each side, {@link PadBefore}): one
 * thread writes it, another spins on it (a stop flag, a failure line).
 */
public final class PaddedReference<T> extends PaddedReferenceValue<T> {
    byte a000, a001, a002, a003, a004, a005, a006, a007, a008, a009, a010, a011, a012, a013, a014, a015;
    byte a016, a017, a018, a019, a020, a021, a022, a023, a024, a025, a026, a027, a028, a029, a030, a031;
    byte a032, a033, a034, a035, a036, a037, a038, a039, a040, a041, a042, a043, a044, a045, a046, a047;
    byte a048, a049, a050, a051, a052, a053, a054, a055, a056, a057, a058, a059, a060, a061, a062, a063;
    byte a064, a065, a066, a067, a068, a069, a070, a071, a072, a073, a074, a075, a076, a077, a078, a079;
    byte a080, a081, a082, a083, a084, a085, a086, a087, a088, a089, a090, a091, a092, a093, a094, a095;
    byte a096, a097, a098, a099, a100, a101, a102, a103, a104, a105, a106, a107, a108, a109, a110, a111;
    byte a112, a113, a114, a115, a116, a117, a118, a119, a120, a121, a122, a123, a124, a125, a126, a127;

    public PaddedReference(T initial) {
        value = initial;
    }

    public T get() {
        return value;
    }

    public void set(T v) {
        value = v;
    }
}

abstract class PaddedReferenceValue<T> extends PadBefore {
    volatile T value;
}
