package dev.edgelm.model;

import dev.edgelm.tensor.Activations;

/**
 * Scratch buffers of one forward call, sized for the largest chunk seen so far and reused, so the
 * steady state (decode, or prefill in equal chunks) allocates nothing. One per model, shared by every
 * sequence: forward calls on a model take turns, and a session's state stays free of scratch.
 */
final class Workspace {
    /** The input of the matmuls being run, packed once for all the matrices that read it. */
    final Activations input = new Activations();
    private int tokens;
    float[] x;        // residual stream [n, hidden]
    float[] normed;   // [n, hidden]
    float[] sublayerOut; // [n, hidden]: what a sublayer (the mixer, then the MLP) adds to the residual stream
    float[] qkv;      // [n, convDim] (linear) / [n, 2 * heads * headDim] (full)
    float[] nextConvWindow; // [convKernel - 1, convDim]: a DeltaNet layer's next conv window
    float[] z;        // [n, Hv * Dv]
    float[] beta;     // [n, Hv]
    float[] decay;    // [n, Hv]
    float[] core;     // [n, max(Hv * Dv, heads * headDim)]
    float[] k;        // [n, kvHeads * headDim]
    float[] v;        // [n, kvHeads * headDim]
    float[] gate;     // [n, intermediate]
    float[] up;       // [n, intermediate]
    float[] cos;      // [n, rotaryDim / 2]
    float[] sin;      // [n, rotaryDim / 2]

    void ensure(Qwen35Config c, int n) {
        if (n <= tokens) {
            return;
        }
        tokens = n;
        int h = c.hiddenSize();
        x = new float[n * h];
        normed = new float[n * h];
        sublayerOut = new float[n * h];
        qkv = new float[n * Math.max(c.convDim(), 2 * c.numHeads() * c.headDim())];
        nextConvWindow = new float[(c.convKernel() - 1) * c.convDim()];
        z = new float[n * c.linearValueTotal()];
        beta = new float[n * c.linearValueHeads()];
        decay = new float[n * c.linearValueHeads()];
        core = new float[n * Math.max(c.linearValueTotal(), c.numHeads() * c.headDim())];
        k = new float[n * c.numKvHeads() * c.headDim()];
        v = new float[n * c.numKvHeads() * c.headDim()];
        gate = new float[n * c.intermediateSize()];
        up = new float[n * c.intermediateSize()];
        cos = new float[n * (c.rotaryDim() / 2)];
        sin = new float[n * (c.rotaryDim() / 2)];
    }
}
