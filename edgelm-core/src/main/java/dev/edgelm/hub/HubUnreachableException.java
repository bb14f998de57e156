package dev.edgelm.hub;

import dev.edgelm.util.EdgeLmException;

/** The Hub could not be reached at all (no network, a wrong {@code HF_ENDPOINT}, a firewall). */
public final class HubUnreachableException extends EdgeLmException {
    private final String endpoint;

    public HubUnreachableException(String endpoint, String why) {
        super("cannot reach the Hugging Face Hub at " + endpoint + ": " + why);
        this.endpoint = endpoint;
    }

    public String endpoint() {
        return endpoint;
    }
}
