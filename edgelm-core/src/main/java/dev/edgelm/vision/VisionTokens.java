package dev.edgelm.vision;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.edgelm.util.EdgeLmException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/** The ids that frame images in a prompt: {@code <|vision_start|>}, a run of {@code <|image_pad|>}, {@code <|vision_end|>}. */
public record VisionTokens(int visionStart, int visionEnd, int imagePad, int videoPad) {
    public static final String VISION_START = "<|vision_start|>";
    public static final String VISION_END = "<|vision_end|>";
    public static final String IMAGE_PAD = "<|image_pad|>";
    public static final String VIDEO_PAD = "<|video_pad|>";

    /** From a checkpoint's config.json (top-level {@code image_token_id}, {@code vision_start_token_id}, ...). */
    public static Optional<VisionTokens> fromConfig(Path configJson) {
        if (!Files.isRegularFile(configJson)) {
            return Optional.empty();
        }
        JsonNode root;
        try {
            root = new ObjectMapper().readTree(Files.readString(configJson));
        } catch (IOException e) {
            throw new EdgeLmException(configJson + ": cannot read or parse: " + e.getMessage());
        }
        if (root == null || !root.has("image_token_id")) {
            return Optional.empty();
        }
        return Optional.of(new VisionTokens(root.path("vision_start_token_id").asInt(-1),
                root.path("vision_end_token_id").asInt(-1), root.get("image_token_id").asInt(),
                root.path("video_token_id").asInt(-1)));
    }

    /** From a vocabulary (a GGUF file's token strings), by the tokens' text. */
    public static Optional<VisionTokens> fromVocabulary(String[] tokens) {
        int start = -1, end = -1, image = -1, video = -1;
        for (int i = 0; i < tokens.length; i++) {
            switch (tokens[i]) {
                case VISION_START -> start = i;
                case VISION_END -> end = i;
                case IMAGE_PAD -> image = i;
                case VIDEO_PAD -> video = i;
                default -> { }
            }
        }
        return image < 0 ? Optional.empty() : Optional.of(new VisionTokens(start, end, image, video));
    }
}
