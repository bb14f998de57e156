package dev.edgelm.model;

/**
 * llama.cpp's GGUF layout for Qwen3.5 (architecture {@code qwen35}): metadata keys, tensor names and the
 * tiled value-head order. Shared by the loader and the converter so both speak the same layout.
 */
public final class Qwen35GgufLayout {
    private Qwen35GgufLayout() {}

    public static final String ARCHITECTURE = "qwen35";

    public static final String CONTEXT_LENGTH = ARCHITECTURE + ".context_length";
    public static final String EMBEDDING_LENGTH = ARCHITECTURE + ".embedding_length";
    public static final String BLOCK_COUNT = ARCHITECTURE + ".block_count";
    public static final String FEED_FORWARD_LENGTH = ARCHITECTURE + ".feed_forward_length";
    public static final String HEAD_COUNT = ARCHITECTURE + ".attention.head_count";
    public static final String HEAD_COUNT_KV = ARCHITECTURE + ".attention.head_count_kv";
    public static final String KEY_LENGTH = ARCHITECTURE + ".attention.key_length";
    public static final String VALUE_LENGTH = ARCHITECTURE + ".attention.value_length";
    public static final String RMS_EPS = ARCHITECTURE + ".attention.layer_norm_rms_epsilon";
    public static final String ROPE_FREQ_BASE = ARCHITECTURE + ".rope.freq_base";
    public static final String ROPE_DIMENSION_COUNT = ARCHITECTURE + ".rope.dimension_count";
    public static final String ROPE_DIMENSION_SECTIONS = ARCHITECTURE + ".rope.dimension_sections";
    public static final String FULL_ATTENTION_INTERVAL = ARCHITECTURE + ".full_attention_interval";
    public static final String SSM_CONV_KERNEL = ARCHITECTURE + ".ssm.conv_kernel";
    public static final String SSM_INNER_SIZE = ARCHITECTURE + ".ssm.inner_size";
    public static final String SSM_STATE_SIZE = ARCHITECTURE + ".ssm.state_size";
    public static final String SSM_TIME_STEP_RANK = ARCHITECTURE + ".ssm.time_step_rank";
    public static final String SSM_GROUP_COUNT = ARCHITECTURE + ".ssm.group_count";
    public static final String NEXTN_PREDICT_LAYERS = ARCHITECTURE + ".nextn_predict_layers";
    /** Only written when the file has no tokenizer, so that llama.cpp still knows the vocabulary size. */
    public static final String VOCAB_SIZE = ARCHITECTURE + ".vocab_size";

    public static final String TOKEN_EMBD = "token_embd.weight";
    public static final String OUTPUT_NORM = "output_norm.weight";
    public static final String OUTPUT = "output.weight";

    // per-layer tensor names, after "blk.N."
    public static final String ATTN_NORM = "attn_norm.weight";
    public static final String POST_ATTENTION_NORM = "post_attention_norm.weight";
    public static final String FFN_GATE = "ffn_gate.weight";
    public static final String FFN_UP = "ffn_up.weight";
    public static final String FFN_DOWN = "ffn_down.weight";
    public static final String ATTN_Q = "attn_q.weight";
    public static final String ATTN_K = "attn_k.weight";
    public static final String ATTN_V = "attn_v.weight";
    public static final String ATTN_OUTPUT = "attn_output.weight";
    public static final String ATTN_Q_NORM = "attn_q_norm.weight";
    public static final String ATTN_K_NORM = "attn_k_norm.weight";
    public static final String ATTN_QKV = "attn_qkv.weight";
    public static final String ATTN_GATE = "attn_gate.weight";
    public static final String SSM_ALPHA = "ssm_alpha.weight";
    public static final String SSM_BETA = "ssm_beta.weight";
    public static final String SSM_CONV1D = "ssm_conv1d.weight";
    public static final String SSM_DT_BIAS = "ssm_dt.bias";
    public static final String SSM_A = "ssm_a";
    public static final String SSM_NORM = "ssm_norm.weight";
    public static final String SSM_OUT = "ssm_out.weight";

    public static String block(int layer, String name) {
        return "blk." + layer + "." + name;
    }

    /**
     * The Hugging Face value head stored at position {@code p} of the tiled order. Hugging Face groups
     * value heads by key head (head h reads key head h / (Hv/Hk)); the GGUF tiles them
     * ({@code [G0v0, G1v0, G0v1, G1v1]}: position p reads key head p % Hk).
     */
    public static int hfValueHeadAt(int p, int keyHeads, int valueHeads) {
        int perKey = valueHeads / keyHeads;
        return (p % keyHeads) * perKey + p / keyHeads;
    }
}
