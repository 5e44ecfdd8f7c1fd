package io.efabench.harness;

/**
 * A benchmark config whose payload lives in one kind of memory. The launcher asks it (not a field
 * found by name) which default configs need a GPU, to leave them out where none is visible.
 */
public interface MemoryConfig {
    MemoryKind memory();
}
