package io.efabench.harness.engine;

/**
 * 128 bytes before a padded cell's value ({@link PaddedLong}, {@link PaddedReference}): adjacent-line
 * prefetch pairs 64-byte lines, so a value another thread spins on stays off the lines of whatever
 * precedes it on the heap. Bytes, not longs: HotSpot places a subclass's field into a hole of its
 * superclass's layout, and a long padding leaves a 4-byte hole after a 12-byte header.
 * {@code LayoutTest} checks the resulting layout on the JVM that runs it.
 */
abstract class PadBefore {
    byte b000, b001, b002, b003, b004, b005, b006, b007, b008, b009, b010, b011, b012, b013, b014, b015;
    byte b016, b017, b018, b019, b020, b021, b022, b023, b024, b025, b026, b027, b028, b029, b030, b031;
    byte b032, b033, b034, b035, b036, b037, b038, b039, b040, b041, b042, b043, b044, b045, b046, b047;
    byte b048, b049, b050, b051, b052, b053, b054, b055, b056, b057, b058, b059, b060, b061, b062, b063;
    byte b064, b065, b066, b067, b068, b069, b070, b071, b072, b073, b074, b075, b076, b077, b078, b079;
    byte b080, b081, b082, b083, b084, b085, b086, b087, b088, b089, b090, b091, b092, b093, b094, b095;
    byte b096, b097, b098, b099, b100, b101, b102, b103, b104, b105, b106, b107, b108, b109, b110, b111;
    byte b112, b113, b114, b115, b116, b117, b118, b119, b120, b121, b122, b123, b124, b125, b126, b127;
}
