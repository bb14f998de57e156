package dev.edgelm.tensor;

/** Element types of weight tensors that EdgeLM can compute with directly. */
public enum DType {
    F32(4),
    F16(2),
    BF16(2);

    private final int bytes;

    DType(int bytes) {
        this.bytes = bytes;
    }

    public int bytes() {
        return bytes;
    }
}
