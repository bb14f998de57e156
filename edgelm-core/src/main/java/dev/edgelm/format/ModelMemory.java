package dev.edgelm.format;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * Where a model file's bytes live while the model runs: by default, on Linux with transparent huge pages,
 * read once into anonymous memory backed by 2 MiB pages; elsewhere (or with {@code EDGELM_WEIGHTS=mmap} /
 * {@code -Dedgelm.weights=mmap}) memory-mapped.
 *
 * <p>Why not always map: decode streams every weight once per token, and a mapped file is held in 4 KiB
 * page-cache pages. Measured on a 2-core VM, sweeping all matrices of the 2B Q8_0 shape on one thread ran at
 * 3.4-10 GB/s from the mapping and at 13-15 GB/s from huge pages (0.8B: 17-18 against 20 GB/s): each 4 KiB
 * page costs a TLB miss, which in a VM is a two-level page walk. The page cache may also drop pages of a
 * mapped model under the host's memory pressure, and a dropped page is a disk read in the middle of a
 * token. Anonymous memory is neither split nor dropped. The cost is the read at load time (a copy from the
 * page cache, or from disk on first use as with a mapping); peak memory is the same, the file's size,
 * since the file itself is never mapped. A file larger than three quarters of the available memory is
 * mapped anyway: mapped pages can be evicted and re-read under memory pressure, anonymous ones (with no
 * swap) cannot.
 */
public final class ModelMemory {
    private static final long HUGE_PAGE = 2L << 20;
    private static final long READ_SLICE = 16L << 20;
    private static final int PROT_READ = 1;
    private static final int PROT_WRITE = 2;
    private static final int MAP_PRIVATE = 2;
    private static final int MAP_ANONYMOUS = 0x20;
    private static final int MADV_HUGEPAGE = 14;
    private static final int MADV_DONTNEED = 4;
    private static final long PAGE = 4096;

    private ModelMemory() {}

    /** How the bytes of a model file are held. */
    public enum Mode { HUGE_PAGES, MAPPED }

    /** The mode this process uses: {@code edgelm.weights} / {@code EDGELM_WEIGHTS}, else what the OS offers. */
    public static Mode preferredMode() {
        String choice = System.getProperty("edgelm.weights", System.getenv("EDGELM_WEIGHTS"));
        if (choice != null && choice.trim().equalsIgnoreCase("mmap")) {
            return Mode.MAPPED;
        }
        return Native.AVAILABLE && transparentHugePagesOffered() ? Mode.HUGE_PAGES : Mode.MAPPED;
    }

    /**
     * The bytes of {@code channel} (its whole size), owned by {@code arena}: in huge pages when {@code mode}
     * asks for them and the system grants the memory, else mapped read-only.
     */
    public static MemorySegment load(FileChannel channel, Arena arena, Mode mode) throws IOException {
        long size = channel.size();
        if (mode == Mode.HUGE_PAGES && size > 0 && fitsInAvailableMemory(size)) {
            MemorySegment s = readIntoHugePages(channel, size, arena);
            if (s != null) {
                return s;
            }
        }
        return channel.map(FileChannel.MapMode.READ_ONLY, 0, size, arena);
    }

    /**
     * Anonymous memory cannot be paged back to the file, so a model that would take most of the free memory
     * is mapped instead: the kernel can then evict and re-read its pages rather than kill the process.
     */
    static boolean fitsInAvailableMemory(long size) {
        long available = availableBytes();
        return available < 0 || size <= available * 3 / 4;
    }

    /** {@code MemAvailable} of {@code /proc/meminfo} in bytes, or -1 where unknown. */
    private static long availableBytes() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
                if (line.startsWith("MemAvailable:")) {
                    String[] parts = line.trim().split("\\s+");
                    return Long.parseLong(parts[1]) * 1024;
                }
            }
        } catch (IOException | RuntimeException e) {
            // fall through: unknown
        }
        return -1;
    }

    private static boolean transparentHugePagesOffered() {
        try {
            String setting = Files.readString(Path.of("/sys/kernel/mm/transparent_hugepage/enabled"));
            return setting.contains("[always]") || setting.contains("[madvise]");
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /** Null when the memory cannot be had (the caller maps instead); I/O errors are thrown. */
    private static MemorySegment readIntoHugePages(FileChannel channel, long size, Arena arena) throws IOException {
        // advice before the first touch, so that the faults below allocate huge pages directly
        MemorySegment bytes = anonymousHugePages(size, arena, true);
        if (bytes == null) {
            return null;
        }
        for (long off = 0; off < size; ) {
            ByteBuffer slice = bytes.asSlice(off, Math.min(READ_SLICE, size - off)).asByteBuffer();
            while (slice.hasRemaining()) {
                int n = channel.read(slice, off + slice.position());
                if (n < 0) {
                    throw new IOException("the file ended at byte " + (off + slice.position()) + " while reading "
                            + size + " bytes (was it truncated while loading?)");
                }
            }
            off += slice.capacity();
        }
        Native.protectReadOnly(bytes.address(), roundUp(size));
        return bytes.asReadOnly();
    }

    /**
     * {@code size} bytes of writable memory owned by {@code arena}, for a kernel's copy of weights in a layout of its
     * own (zeroed): anonymous memory advised to huge pages where the system offers them (in either {@link Mode}), for
     * the reason given above (a streamed copy in 4 KiB pages pays a TLB miss per page); else {@code arena.allocate}.
     */
    public static MemorySegment workingCopy(long size, Arena arena) {
        MemorySegment bytes = size > 0 && Native.AVAILABLE && transparentHugePagesOffered()
                ? anonymousHugePages(size, arena, false) : null;
        return bytes != null ? bytes : arena.allocate(size, 64);
    }

    /**
     * {@code size} bytes of private anonymous memory aligned to a huge page and advised into huge pages, unmapped with
     * {@code arena}; null if the mapping fails, or if the advice is refused and {@code adviceRequired} (a refused
     * advice leaves usable memory in small pages).
     */
    private static MemorySegment anonymousHugePages(long size, Arena arena, boolean adviceRequired) {
        long length = size + HUGE_PAGE;
        MemorySegment raw;
        try {
            raw = (MemorySegment) Native.MMAP.invokeExact(MemorySegment.NULL, length, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0L);
        } catch (Throwable t) {
            return null;
        }
        if (raw.address() == -1L || raw.address() == 0L) {
            return null;
        }
        long base = raw.address();
        long aligned = (base + HUGE_PAGE - 1) & -HUGE_PAGE;
        MemorySegment bytes = MemorySegment.ofAddress(aligned).reinterpret(size, arena, s -> Native.unmap(base, length));
        int advised;
        try {
            advised = (int) Native.MADVISE.invokeExact(MemorySegment.ofAddress(aligned), roundUp(size), MADV_HUGEPAGE);
        } catch (Throwable t) {
            advised = -1;
        }
        return advised == 0 || !adviceRequired ? bytes : null; // refused and required: the arena still unmaps it
    }

    /**
     * Gives the memory of the whole 4 KiB pages inside {@code bytes} back to the system ({@code madvise(MADV_DONTNEED)}),
     * for a tensor whose readers all read a working copy of it from now on: in {@link Mode#HUGE_PAGES} the pages are
     * freed (a huge page is split, its other parts stay), in {@link Mode#MAPPED} they leave the process (the file
     * keeps them). The caller guarantees that nothing reads those bytes afterwards: a freed anonymous page reads as
     * zeros, a dropped mapped one is read again from the file. The partial pages at either end (other tensors'
     * bytes) are kept. Returns the bytes released (0 off Linux, for heap segments, or if the call failed).
     */
    public static long release(MemorySegment bytes) {
        return release(bytes, 0, bytes.byteSize());
    }

    /**
     * As {@link #release(MemorySegment)} for the whole pages of {@code bytes} that lie in its range {@code [from, to)}:
     * a caller releasing a tensor piece by piece passes the previous call's {@code to} rounded down to a page boundary
     * of the address ({@link #pageStart}) as the next {@code from}, so that no page between two pieces is left.
     */
    public static long release(MemorySegment bytes, long from, long to) {
        if (!Native.AVAILABLE || !bytes.isNative()) {
            return 0;
        }
        long start = Math.max((bytes.address() + from + PAGE - 1) & -PAGE, (bytes.address() + PAGE - 1) & -PAGE);
        long end = Math.min((bytes.address() + to) & -PAGE, (bytes.address() + bytes.byteSize()) & -PAGE);
        if (end <= start) {
            return 0;
        }
        try {
            int rc = (int) Native.MADVISE.invokeExact(MemorySegment.ofAddress(start), end - start, MADV_DONTNEED);
            return rc == 0 ? end - start : 0;
        } catch (Throwable t) {
            return 0; // the pages stay: only memory is lost
        }
    }

    /** The offset in {@code bytes} of the page boundary at or below offset {@code at} (the next piece's start). */
    public static long pageStart(MemorySegment bytes, long at) {
        return ((bytes.address() + at) & -PAGE) - bytes.address();
    }

    private static long roundUp(long size) {
        return (size + 4095) & ~4095L;
    }

    /** The few libc calls, looked up once; absent off Linux. */
    private static final class Native {
        static final MethodHandle MMAP;
        static final MethodHandle MUNMAP;
        static final MethodHandle MADVISE;
        static final MethodHandle MPROTECT;
        static final boolean AVAILABLE;

        static {
            MethodHandle mmap = null;
            MethodHandle munmap = null;
            MethodHandle madvise = null;
            MethodHandle mprotect = null;
            boolean ok = false;
            if (System.getProperty("os.name", "").toLowerCase(Locale.ROOT).contains("linux")) {
                try {
                    Linker linker = Linker.nativeLinker();
                    SymbolLookup libc = linker.defaultLookup();
                    mmap = linker.downcallHandle(libc.find("mmap").orElseThrow(),
                            FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG,
                                    ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG));
                    FunctionDescriptor addrLenInt = FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS,
                            ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT);
                    madvise = linker.downcallHandle(libc.find("madvise").orElseThrow(), addrLenInt);
                    mprotect = linker.downcallHandle(libc.find("mprotect").orElseThrow(), addrLenInt);
                    munmap = linker.downcallHandle(libc.find("munmap").orElseThrow(),
                            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG));
                    ok = true;
                } catch (RuntimeException | LinkageError e) {
                    ok = false; // no native access (or no such symbols): map files instead
                }
            }
            MMAP = mmap;
            MUNMAP = munmap;
            MADVISE = madvise;
            MPROTECT = mprotect;
            AVAILABLE = ok;
        }

        static void unmap(long base, long length) {
            try {
                int rc = (int) MUNMAP.invokeExact(MemorySegment.ofAddress(base), length);
            } catch (Throwable t) {
                // nothing useful to do when closing; the process keeps the memory
            }
        }

        static void protectReadOnly(long address, long length) {
            try {
                int rc = (int) MPROTECT.invokeExact(MemorySegment.ofAddress(address), length, PROT_READ);
            } catch (Throwable t) {
                // read-only protection is a safety net, not a requirement
            }
        }
    }
}
