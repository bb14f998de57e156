package dev.edgelm.format.gguf;

/** The metadata value types of GGUF, with their on-disk ids and fixed sizes (0 for string and array). */
public enum GgufValueType {
    UINT8(0, 1),
    INT8(1, 1),
    UINT16(2, 2),
    INT16(3, 2),
    UINT32(4, 4),
    INT32(5, 4),
    FLOAT32(6, 4),
    BOOL(7, 1),
    STRING(8, 0),
    ARRAY(9, 0),
    UINT64(10, 8),
    INT64(11, 8),
    FLOAT64(12, 8);

    private static final GgufValueType[] BY_ID = new GgufValueType[13];

    static {
        for (GgufValueType t : values()) {
            BY_ID[t.id] = t;
        }
    }

    private final int id;
    private final int size;

    GgufValueType(int id, int size) {
        this.id = id;
        this.size = size;
    }

    public int id() {
        return id;
    }

    /** Bytes of one value of a fixed-size type; 0 for STRING and ARRAY. */
    public int size() {
        return size;
    }

    /** The fewest bytes one value can take on disk: a string or array still has its 8-byte length. */
    long minEncodedSize() {
        return switch (this) {
            case STRING -> 8;
            case ARRAY -> 12;
            default -> size;
        };
    }

    public boolean isInteger() {
        return switch (this) {
            case UINT8, INT8, UINT16, INT16, UINT32, INT32, UINT64, INT64 -> true;
            default -> false;
        };
    }

    /** The type with on-disk id {@code id}, or null. */
    public static GgufValueType byId(long id) {
        return id >= 0 && id < BY_ID.length ? BY_ID[(int) id] : null;
    }
}
