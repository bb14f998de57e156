package dev.edgelm.engine.batch;

import dev.edgelm.engine.GenerationListener;
import dev.edgelm.engine.GenerationOptions;
import dev.edgelm.engine.TokenDecoder;

/**
 * One generation for a {@link BatchScheduler}: a whole prompt (the scheduler finds how much of it an earlier
 * request already computed), the sampling options, and where the text goes.
 *
 * @param prompt     the token ids; the sequence starts empty (nothing of a previous request carries over
 *                   except through the prefix cache, which gives the same result as prefilling)
 * @param options    sampling, stop tokens, stop strings and the token limit, as for {@code Session.generate}
 * @param decoder    turns tokens into text for the listener, the result and stop strings; may be null
 * @param listener   receives tokens and text, on the scheduler's thread; may be null
 * @param snapshotAt prompt offsets (0 < offset <= prompt length) where a later request is likely to part from
 *                   this one, such as message boundaries: the prefix cache keeps the state there (besides
 *                   every {@link BatchOptions#snapshotInterval()} tokens and the ends of prompt and reply);
 *                   may be null. Each ends a prefill chunk, and every chunk costs a fixed time besides its
 *                   tokens (its weight rows are decoded once), so these are where a chunk may end
 * @param snapshotLater prompt offsets where a later request is likely to part from this one but where this
 *                   request's prefill should not stop (it would delay the first token by a chunk's fixed
 *                   cost): the scheduler takes the snapshot after the request, on its own, while it has
 *                   nothing else to do, or at the latest before it admits a request whose prompt extends
 *                   that prefix; may be null
 */
public record GenerationRequest(int[] prompt, GenerationOptions options, TokenDecoder decoder,
                                GenerationListener listener, int[] snapshotAt, int[] snapshotLater) {

    public GenerationRequest(int[] prompt, GenerationOptions options, TokenDecoder decoder, GenerationListener listener) {
        this(prompt, options, decoder, listener, null, null);
    }

    public GenerationRequest(int[] prompt, GenerationOptions options, TokenDecoder decoder, GenerationListener listener,
                             int[] snapshotAt) {
        this(prompt, options, decoder, listener, snapshotAt, null);
    }
}
