package dev.edgelm.hub;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.edgelm.util.AtomicFiles;
import dev.edgelm.util.EdgeLmException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Downloads the files a runtime needs from a model repository on the Hugging Face Hub into a local cache:
 * config, generation config, tokenizer files, chat template, safetensors weights and their index.
 *
 * <p>Cache layout (the Hugging Face layout, without symlinks): {@code <cache>/models--<owner>--<name>/}
 * holds {@code snapshots/<commit>/<files>} and {@code refs/<revision>} (the commit a revision resolved to,
 * written once every file of the snapshot is complete; it lets a later run work offline). A file being
 * downloaded is {@code <file>.part} next to its final place; an interrupted download resumes from it with
 * an HTTP {@code Range} request. Each file is checked against the size and hash the Hub lists (SHA-256
 * for LFS files, the git blob id for others); a mismatch is downloaded once more, then reported.
 *
 * <p>{@code HF_TOKEN} is sent as a bearer token to the Hub endpoint only (not to the storage hosts it
 * redirects to); {@code HF_ENDPOINT} replaces {@code https://huggingface.co}.
 */
public final class HubClient {
    public static final String DEFAULT_ENDPOINT = "https://huggingface.co";
    private static final int MAX_REDIRECTS = 10;
    /** Requests per file before giving up: dropped connections, refused ranges and restarts all count. */
    static final int MAX_ATTEMPTS = 5;
    /** The largest file listing read (the Hub's own for big repositories are a few hundred KB). */
    private static final int MAX_LISTING_BYTES = 64 << 20;
    /** Default for {@code EDGELM_HUB_TIMEOUT}: seconds a download may go without receiving a byte. */
    public static final int DEFAULT_READ_TIMEOUT_S = 60;
    private static final int BUFFER = 1 << 16;

    private final URI endpoint;
    private final String token;
    private final Path cache;
    private final PrintStream progress;
    private final HttpClient http;
    private final Duration readTimeout;
    private final Duration backoff;

    /**
     * @param endpoint the Hub, e.g. {@code https://huggingface.co}
     * @param token    a Hugging Face access token, or null
     * @param cache    the hub cache folder (model folders go below it)
     * @param progress where progress bars and notes go (normally stderr), or null for silence
     */
    public HubClient(URI endpoint, String token, Path cache, PrintStream progress) {
        this(endpoint, token, cache, progress, Duration.ofSeconds(DEFAULT_READ_TIMEOUT_S), Duration.ofMillis(250));
    }

    /**
     * @param readTimeout how long a response may go without a byte before the transfer counts as broken
     * @param backoff     the wait before the second attempt at a file; it doubles for each further one
     */
    public HubClient(URI endpoint, String token, Path cache, PrintStream progress, Duration readTimeout, Duration backoff) {
        checkHttpUrl(endpoint, "the Hub endpoint");
        this.readTimeout = readTimeout;
        this.backoff = backoff;
        String e = endpoint.toString();
        this.endpoint = URI.create(e.endsWith("/") ? e.substring(0, e.length() - 1) : e);
        this.token = token == null || token.isBlank() ? null : token.trim();
        this.cache = cache;
        this.progress = progress;
        this.http = HttpClient.newBuilder()
                .followRedirects(HttpClient.Redirect.NEVER)
                .connectTimeout(Duration.ofSeconds(30))
                .build();
    }

    /** Configured from {@code HF_ENDPOINT}, {@code HF_TOKEN} and {@code EDGELM_CACHE}; progress on stderr. */
    public static HubClient fromEnvironment() {
        return fromEnvironment(System.getenv(), System.err);
    }

    public static HubClient fromEnvironment(Map<String, String> env, PrintStream progress) {
        String endpoint = env.getOrDefault("HF_ENDPOINT", "");
        URI uri;
        try {
            uri = URI.create(endpoint.isBlank() ? DEFAULT_ENDPOINT : endpoint.trim());
        } catch (IllegalArgumentException e) {
            throw new EdgeLmException("HF_ENDPOINT '" + endpoint + "' is not a URL");
        }
        if (uri.getScheme() == null || uri.getHost() == null
                || !(uri.getScheme().equalsIgnoreCase("http") || uri.getScheme().equalsIgnoreCase("https"))) {
            throw new EdgeLmException("HF_ENDPOINT '" + endpoint + "' is not an http(s) URL");
        }
        int timeout = DEFAULT_READ_TIMEOUT_S;
        String t = env.get("EDGELM_HUB_TIMEOUT");
        if (t != null && !t.isBlank()) {
            try {
                timeout = Integer.parseInt(t.trim());
            } catch (NumberFormatException e) {
                timeout = -1;
            }
            if (timeout < 1) {
                throw new EdgeLmException("EDGELM_HUB_TIMEOUT '" + t + "' is not a positive number of seconds");
            }
        }
        return new HubClient(uri, env.get("HF_TOKEN"), defaultCache(env).resolve("hub"), progress,
                Duration.ofSeconds(timeout), Duration.ofMillis(250));
    }

    /** An absolute http(s) URL with a host, or a clear error naming {@code what}. */
    private static void checkHttpUrl(URI uri, String what) {
        String scheme = uri.getScheme();
        if (scheme == null || !(scheme.equalsIgnoreCase("http") || scheme.equalsIgnoreCase("https")) || uri.getHost() == null) {
            throw new EdgeLmException(what + " '" + uri + "' is not an http(s) URL with a host");
        }
    }

    /** {@code $EDGELM_CACHE}, else {@code ~/.cache/edgelm}. */
    public static Path defaultCache(Map<String, String> env) {
        String dir = env.get("EDGELM_CACHE");
        if (dir != null && !dir.isBlank()) {
            return Path.of(dir);
        }
        return Path.of(System.getProperty("user.home"), ".cache", "edgelm");
    }

    /** The files of a repository a runtime needs; everything else (docs, other formats) is skipped. */
    public static boolean isNeeded(String name) {
        if (name.contains("/")) {
            return false;
        }
        return switch (name) {
            case "config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json", "vocab.json",
                 "merges.txt", "special_tokens_map.json", "added_tokens.json", "chat_template.jinja",
                 "chat_template.json", "preprocessor_config.json" -> true;
            default -> name.endsWith(".safetensors") || name.endsWith(".safetensors.index.json");
        };
    }

    /** The Hub's address, e.g. {@code https://huggingface.co}. */
    public String endpoint() {
        return endpoint.toString();
    }

    /** The hub cache folder (model folders go below it). */
    public Path cache() {
        return cache;
    }

    /** The cache folder of one repository. */
    public Path repoFolder(HubRepoId repo) {
        return cache.resolve("models--" + repo.owner() + "--" + repo.name());
    }

    /** Downloads what is missing and returns the snapshot folder (a checkpoint folder). */
    public Path download(HubRepoId repo) {
        Listing listing;
        try {
            listing = list(repo);
        } catch (NetworkException e) {
            Optional<Path> cached = cachedSnapshot(repo);
            if (cached.isPresent()) {
                note("cannot reach " + endpoint + " (" + e.getMessage() + "); using the cached " + repo + " at " + cached.get());
                return cached.get();
            }
            throw new HubUnreachableException(endpoint.toString(), e.getMessage());
        }
        List<HubFile> files = listing.files().stream().filter(f -> isNeeded(f.name())).toList();
        if (files.stream().noneMatch(f -> f.name().endsWith(".safetensors"))) {
            throw new EdgeLmException("model " + repo + " has no .safetensors weights on the Hub (files: "
                    + listing.files().stream().map(HubFile::name).toList() + ")");
        }
        Path snapshot = repoFolder(repo).resolve("snapshots").resolve(listing.commit());
        try {
            Files.createDirectories(snapshot);
            for (HubFile f : files) {
                fetchVerified(repo, listing.commit(), f, snapshot);
            }
            writeAtomically(refFile(repo), listing.commit());
        } catch (NetworkException e) {
            throw new EdgeLmException("download of " + repo + " from " + endpoint + " failed: " + e.getMessage()
                    + " (run again to resume)");
        } catch (IOException e) {
            throw new EdgeLmException("cannot write to the cache folder " + snapshot + ": " + e.getMessage());
        }
        return snapshot;
    }

    private Path refFile(HubRepoId repo) {
        return repoFolder(repo).resolve("refs").resolve(repo.revision());
    }

    private Optional<Path> cachedSnapshot(HubRepoId repo) {
        try {
            Path ref = refFile(repo);
            if (Files.isRegularFile(ref)) {
                Path snapshot = repoFolder(repo).resolve("snapshots").resolve(Files.readString(ref).trim());
                if (Files.isDirectory(snapshot)) {
                    return Optional.of(snapshot);
                }
            }
        } catch (IOException e) {
            // no usable cache entry
        }
        return Optional.empty();
    }

    /** The resolved commit and the files of a revision. */
    record Listing(String commit, List<HubFile> files) {}

    Listing list(HubRepoId repo) {
        URI uri = URI.create(endpoint + "/api/models/" + repo.id() + "/revision/" + encode(repo.revision()) + "?blobs=true");
        HttpResponse<InputStream> response = send(uri, null);
        if (response.statusCode() != 200) {
            closeQuietly(response.body());
        }
        checkStatus(response, repo, "listing the files of");
        byte[] body;
        try (InputStream in = response.body()) {
            body = in.readNBytes(MAX_LISTING_BYTES + 1);
        } catch (IOException e) {
            throw new NetworkException("reading the file list of " + repo + " failed: " + describe(e));
        }
        if (body.length > MAX_LISTING_BYTES) {
            throw new EdgeLmException(uri + ": the Hub's file list is larger than " + (MAX_LISTING_BYTES >> 20) + " MB");
        }
        JsonNode root;
        try {
            root = new ObjectMapper().readTree(body);
        } catch (IOException e) {
            throw new EdgeLmException(uri + ": the Hub's answer is not JSON: " + e.getMessage());
        }
        String commit = root.path("sha").asText("");
        if (!commit.matches("[0-9a-fA-F]{40}")) {
            throw new EdgeLmException(uri + ": the Hub's answer has no commit 'sha'");
        }
        JsonNode siblings = root.get("siblings");
        if (siblings == null || !siblings.isArray()) {
            throw new EdgeLmException(uri + ": the Hub's answer has no file list 'siblings'");
        }
        List<HubFile> files = new ArrayList<>();
        for (JsonNode s : siblings) {
            String name = s.path("rfilename").asText("");
            if (name.isEmpty() || name.startsWith("/") || name.contains("..") || name.contains("\\")) {
                throw new EdgeLmException(uri + ": the Hub lists an unusable file name '" + name + "'");
            }
            JsonNode lfs = s.get("lfs");
            long size = s.path("size").asLong(-1);
            String sha256 = null;
            if (lfs != null && lfs.isObject()) {
                sha256 = lfs.path("sha256").asText(null);
                size = lfs.path("size").asLong(size);
            }
            String blobId = lfs == null ? s.path("blobId").asText(null) : null;
            files.add(new HubFile(name, size, sha256, blobId));
        }
        return new Listing(commit.toLowerCase(), files);
    }

    /** Downloads one file into {@code folder} unless it is already there; checks it; retries a bad copy once. */
    private void fetchVerified(HubRepoId repo, String commit, HubFile file, Path folder) throws IOException {
        Path target = folder.resolve(file.name());
        if (Files.isRegularFile(target) && (file.size() < 0 || Files.size(target) == file.size())) {
            return;
        }
        Path part = folder.resolve(file.name() + ".part");
        URI uri = URI.create(endpoint + "/" + repo.id() + "/resolve/" + commit + "/" + encodePath(file.name()));
        for (int attempt = 1; ; attempt++) {
            fetch(repo, uri, file, part);
            String problem = check(file, part);
            if (problem == null) {
                AtomicFiles.commit(part, target);
                return;
            }
            Files.deleteIfExists(part);
            if (attempt == 2) {
                throw new EdgeLmException(file.name() + " of " + repo + " is corrupt after two downloads: " + problem);
            }
            note(file.name() + ": " + problem + "; downloading it again");
        }
    }

    /** Brings {@code part} to the whole file, resuming what is there; retries dropped connections. */
    private void fetch(HubRepoId repo, URI uri, HubFile file, Path part) throws IOException {
        String last = null;
        for (int attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
            if (attempt > 1) {
                pause(attempt);
            }
            long have = Files.exists(part) ? Files.size(part) : 0;
            if (file.size() >= 0 && have == file.size()) {
                return;
            }
            if (file.size() >= 0 && have > file.size()) {
                Files.delete(part);
                have = 0;
            }
            try {
                if (download(repo, uri, file, part, have)) {
                    return;
                }
                last = "the server refused to resume (HTTP 416 or a wrong Content-Range); starting over";
            } catch (NetworkException e) {
                last = e.getMessage();
            }
            if (attempt < MAX_ATTEMPTS) {
                note(file.name() + ": " + last + "; resuming");
            }
        }
        throw new NetworkException(file.name() + ": gave up after " + MAX_ATTEMPTS + " attempts; the last: " + last);
    }

    /** Waits before attempt {@code attempt} (2, 3, ...): the backoff, doubled for each attempt after the second. */
    private void pause(int attempt) {
        long millis = Math.min(backoff.toMillis() << Math.min(attempt - 2, 10), 30_000);
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new EdgeLmException("download interrupted");
        }
    }

    /**
     * One GET from byte {@code have} on. Returns true when the body arrived whole, false when the server
     * asked for a restart (an unsatisfiable range); throws {@link NetworkException} when the transfer broke.
     */
    private boolean download(HubRepoId repo, URI uri, HubFile file, Path part, long have) throws IOException {
        HttpResponse<InputStream> response = send(uri, have > 0 ? "bytes=" + have + "-" : null);
        int status = response.statusCode();
        if (status == 416) {
            response.body().close();
            Files.deleteIfExists(part);
            return false;
        }
        if (status == 206 && !rangeStartsAt(response, have)) {
            // bytes from elsewhere in the file would be appended at the wrong place: start over
            response.body().close();
            Files.deleteIfExists(part);
            return false;
        }
        if (status != 200 && status != 206) {
            response.body().close();
        }
        checkStatus(response, repo, "downloading " + file.name() + " of");
        boolean append = status == 206;
        if (!append) {
            have = 0;
        }
        long expectedLength = response.headers().firstValueAsLong("Content-Length").orElse(-1);
        // never more than the listing's size: what a server sends beyond it is not the listed file
        long room = file.size() >= 0 ? file.size() - have : Long.MAX_VALUE;
        boolean cut = false;
        DownloadProgress bar = new DownloadProgress(progress, file.name(), file.size(), have);
        long received = 0;
        try (InputStream in = response.body();
             OutputStream out = Files.newOutputStream(part, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                     append ? StandardOpenOption.APPEND : StandardOpenOption.TRUNCATE_EXISTING)) {
            byte[] buffer = new byte[BUFFER];
            int n;
            while (true) {
                try {
                    n = in.read(buffer);
                } catch (IOException e) {
                    throw new NetworkException("connection lost after " + (have + received) + " bytes: " + describe(e));
                }
                if (n < 0) {
                    break;
                }
                if (n > room - received) {
                    n = (int) (room - received);
                    cut = true;
                }
                out.write(buffer, 0, n);
                received += n;
                bar.advance(n);
                if (cut) {
                    break;
                }
            }
        } finally {
            bar.finish();
        }
        if (cut) {
            note(file.name() + ": the server sent more than the " + file.size() + " bytes the Hub lists; the rest was dropped");
            return true;
        }
        if (expectedLength >= 0 && received != expectedLength) {
            throw new NetworkException("connection closed after " + received + " of " + expectedLength + " bytes");
        }
        return true;
    }

    /** Null when {@code part} matches the listing, else what is wrong. */
    private static String check(HubFile file, Path part) throws IOException {
        long size = Files.size(part);
        if (file.size() >= 0 && size != file.size()) {
            return "size " + size + " bytes, the Hub lists " + file.size();
        }
        if (file.sha256() != null) {
            String actual = digest(part, "SHA-256", null);
            if (!actual.equalsIgnoreCase(file.sha256())) {
                return "sha256 " + actual + ", the Hub lists " + file.sha256();
            }
        } else if (file.gitBlobId() != null) {
            String actual = digest(part, "SHA-1", ("blob " + size + "\0").getBytes(StandardCharsets.US_ASCII));
            if (!actual.equalsIgnoreCase(file.gitBlobId())) {
                return "git blob id " + actual + ", the Hub lists " + file.gitBlobId();
            }
        }
        return null;
    }

    static String digest(Path file, String algorithm, byte[] prefix) throws IOException {
        MessageDigest md;
        try {
            md = MessageDigest.getInstance(algorithm);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        if (prefix != null) {
            md.update(prefix);
        }
        try (InputStream in = Files.newInputStream(file)) {
            byte[] buffer = new byte[BUFFER];
            int n;
            while ((n = in.read(buffer)) > 0) {
                md.update(buffer, 0, n);
            }
        }
        return HexFormat.of().formatHex(md.digest());
    }

    /**
     * Sends a GET, following redirects itself so that the token goes only to the Hub endpoint's host and the
     * {@code Range} header survives every hop.
     */
    private HttpResponse<InputStream> send(URI uri, String range) {
        HttpResponse.BodyHandler<InputStream> handler = TimedBody.handler(readTimeout);
        URI current = uri;
        for (int hop = 0; hop <= MAX_REDIRECTS; hop++) {
            HttpRequest.Builder b = HttpRequest.newBuilder(current).GET()
                    .timeout(Duration.ofSeconds(60))
                    .header("User-Agent", "edgelm");
            if (token != null && sameOrigin(current, endpoint)) {
                b.header("Authorization", "Bearer " + token);
            }
            if (range != null) {
                b.header("Range", range);
            }
            HttpResponse<InputStream> response;
            try {
                response = http.send(b.build(), handler);
            } catch (IllegalArgumentException e) {
                throw new EdgeLmException(current + ": cannot be requested: " + e.getMessage());
            } catch (IOException e) {
                throw new NetworkException(describe(e));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new EdgeLmException("download interrupted");
            }
            int status = response.statusCode();
            if (status == 301 || status == 302 || status == 303 || status == 307 || status == 308) {
                closeQuietly(response.body());
                URI from = current;
                String location = response.headers().firstValue("Location")
                        .orElseThrow(() -> new EdgeLmException(from + ": redirect (" + status + ") without a Location"));
                try {
                    current = current.resolve(new URI(location.trim()));
                } catch (URISyntaxException | IllegalArgumentException e) {
                    throw new EdgeLmException(from + ": redirect (" + status + ") to an unparsable Location '"
                            + printable(location) + "'");
                }
                String scheme = current.getScheme() == null ? "" : current.getScheme().toLowerCase(java.util.Locale.ROOT);
                if (!(scheme.equals("http") || scheme.equals("https")) || current.getHost() == null) {
                    throw new EdgeLmException(from + ": redirect (" + status + ") to '" + printable(location)
                            + "', which is not an http(s) URL with a host");
                }
                if (!"https".equals(scheme) && "https".equals(uri.getScheme())) {
                    throw new EdgeLmException(uri + ": redirected to a non-HTTPS address " + current);
                }
                continue;
            }
            return response;
        }
        throw new EdgeLmException(uri + ": more than " + MAX_REDIRECTS + " redirects");
    }

    private void checkStatus(HttpResponse<?> response, HubRepoId repo, String action) {
        int status = response.statusCode();
        if (status == 200 || status == 206) {
            return;
        }
        String code = response.headers().firstValue("X-Error-Code").orElse("");
        String hubMessage = response.headers().firstValue("X-Error-Message").map(m -> " (Hub: " + m + ")").orElse("");
        String tokenHint = token == null
                ? "set HF_TOKEN to an access token of an account that may read it"
                : "the HF_TOKEN given was not accepted for it";
        String what = action + " " + repo;
        switch (status) {
            case 401 -> {
                if ("RepoNotFound".equals(code)) {
                    throw new EdgeLmException("model " + repo.id() + " not found on the Hub (or it is private: "
                            + tokenHint + ")" + hubMessage);
                }
                throw new EdgeLmException(what + ": authentication required (401): the model is gated or private; "
                        + tokenHint + hubMessage);
            }
            case 403 -> throw new EdgeLmException(what + ": access denied (403): the model is gated; accept its conditions "
                    + "on its Hub page and " + tokenHint + hubMessage);
            case 404 -> {
                if ("RevisionNotFound".equals(code)) {
                    throw new EdgeLmException("revision '" + repo.revision() + "' of " + repo.id() + " not found on the Hub" + hubMessage);
                }
                if ("EntryNotFound".equals(code)) {
                    throw new EdgeLmException(what + ": file not found (404)" + hubMessage);
                }
                throw new EdgeLmException("model " + repo.id() + " not found on the Hub (404)" + hubMessage);
            }
            case 429 -> throw new EdgeLmException(what + ": the Hub is rate-limiting requests (429); try again later"
                    + (token == null ? " or set HF_TOKEN" : "") + hubMessage);
            default -> {
                if (status >= 500) {
                    throw new NetworkException("the Hub answered " + status + " while " + what);
                }
                throw new EdgeLmException(what + ": unexpected HTTP status " + status + hubMessage);
            }
        }
    }

    /** Whether a 206 answer's {@code Content-Range} starts at byte {@code from}. */
    private static boolean rangeStartsAt(HttpResponse<?> response, long from) {
        String range = response.headers().firstValue("Content-Range").orElse("");
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("bytes\\s+(\\d+)-\\d+/(\\d+|\\*)").matcher(range.trim());
        return m.matches() && m.group(1).length() < 19 && Long.parseLong(m.group(1)) == from;
    }

    /** A server-given string cut to a readable length with control characters escaped. */
    private static String printable(String s) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < s.length() && sb.length() < 200; i++) {
            char c = s.charAt(i);
            sb.append(c < 0x20 || c == 0x7f ? String.format("\\x%02x", (int) c) : String.valueOf(c));
        }
        return s.length() > 200 ? sb + "..." : sb.toString();
    }

    private static boolean sameOrigin(URI a, URI b) {
        return Objects.equals(a.getScheme(), b.getScheme()) && a.getHost() != null
                && a.getHost().equalsIgnoreCase(b.getHost()) && a.getPort() == b.getPort();
    }

    private static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }

    private static String encodePath(String path) {
        StringBuilder sb = new StringBuilder();
        for (String segment : path.split("/")) {
            if (!sb.isEmpty()) {
                sb.append('/');
            }
            sb.append(encode(segment));
        }
        return sb.toString();
    }

    /**
     * What went wrong in plain words (no exception class names), e.g. "the host name could not be resolved
     * (no network, or no DNS)"; unknown failures give their message.
     */
    private static String describe(Throwable e) {
        String message = null;
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            String name = t.getClass().getSimpleName();
            if (name.equals("UnresolvedAddressException") || name.equals("UnknownHostException")) {
                return "the host name could not be resolved (no network, or no DNS)";
            }
            if (name.contains("Timeout")) {
                return "no answer in time (a slow or blocked network)";
            }
            if (name.startsWith("SSL")) {
                return "the secure (TLS) connection failed" + (t.getMessage() == null ? "" : ": " + t.getMessage());
            }
            if (name.equals("ConnectException")) {
                return "the connection was refused or could not be made";
            }
            if (message == null && t.getMessage() != null && !t.getMessage().isBlank()) {
                message = t.getMessage();
            }
        }
        return message != null ? message : "the connection failed";
    }

    private static void closeQuietly(Object body) {
        if (body instanceof AutoCloseable c) {
            try {
                c.close();
            } catch (Exception e) {
                // the redirect's body is of no interest
            }
        }
    }

    private void note(String message) {
        if (progress != null) {
            progress.println("edgelm: " + message);
            progress.flush();
        }
    }

    private static void writeAtomically(Path file, String content) throws IOException {
        Files.createDirectories(file.getParent());
        AtomicFiles.write(file, out -> out.write(content.getBytes(StandardCharsets.UTF_8)));
    }

    /** A transfer that failed for network reasons (worth retrying or resuming). */
    static final class NetworkException extends EdgeLmException {
        NetworkException(String message) {
            super(message);
        }
    }
}
