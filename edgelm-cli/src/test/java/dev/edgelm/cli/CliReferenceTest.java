package dev.edgelm.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * docs/cli.md is the help of every command as picocli prints it. {@code EDGELM_UPDATE_DOCS=1 bin/mvn -B -q test
 * -Dtest=CliReferenceTest} writes the page anew; the test fails when the page documents a command or an option
 * that no longer exists (a command or option added since only makes the page incomplete: regenerate it).
 */
class CliReferenceTest {
    static final Path PAGE = Path.of("docs/cli.md");

    static String render() {
        StringBuilder md = new StringBuilder("""
                # Command-line reference

                Generated from the commands themselves (`edgelm COMMAND --help` prints the same); see
                [getting started](getting-started.md) for a first run and [troubleshooting](troubleshooting.md)
                for the common errors. MODEL, wherever it appears, is a `.gguf` file, a checkpoint folder, or a
                Hugging Face model id ([models](models.md)).

                """);
        CommandLine root = Main.commandLine(ProcessContext.none());
        append(md, root, "edgelm");
        for (var e : root.getSubcommands().entrySet()) {
            CommandLine sub = e.getValue();
            if (!e.getKey().equals(sub.getCommandName()) || sub.getCommandSpec().usageMessage().hidden()
                    || e.getKey().equals("help")) {
                continue;
            }
            append(md, sub, "edgelm " + e.getKey());
        }
        return md.toString();
    }

    private static void append(StringBuilder md, CommandLine cli, String title) {
        StringWriter usage = new StringWriter();
        cli.usage(new PrintWriter(usage), CommandLine.Help.Ansi.OFF);
        md.append("## ").append(title).append("\n\n```text\n").append(usage.toString().stripTrailing()).append("\n```\n\n");
    }

    @Test
    void everyCommandAndOptionOnTheReferencePageExists() throws IOException {
        if ("1".equals(System.getenv("EDGELM_UPDATE_DOCS"))) {
            Files.writeString(PAGE, render());
        }
        String page = Files.readString(PAGE);
        CommandLine root = Main.commandLine(ProcessContext.none());
        java.util.regex.Matcher section = java.util.regex.Pattern.compile("(?m)^## edgelm ?([a-z-]*)\n\n```text\n(.*?)```",
                java.util.regex.Pattern.DOTALL).matcher(page);
        int sections = 0;
        while (section.find()) {
            sections++;
            String name = section.group(1);
            CommandLine cli = name.isEmpty() ? root : root.getSubcommands().get(name);
            if (cli == null) {
                throw new AssertionError("docs/cli.md documents 'edgelm " + name + "', which no longer exists: regenerate it");
            }
            // option lines as picocli prints them: "  -p, --prompt=TEXT" or "      --json" (descriptions wrap deeper)
            java.util.regex.Matcher option = java.util.regex.Pattern.compile(
                    "(?m)^(?:  -[a-zA-Z], |      )--(\\[no-\\])?([a-zA-Z][\\w-]*)").matcher(section.group(2));
            while (option.find()) {
                String o = "--" + option.group(2);
                assertEquals(true, cli.getCommandSpec().findOption(o) != null,
                        "edgelm " + name + ": docs/cli.md lists " + o + ", which no longer exists: regenerate the page");
            }
        }
        assertEquals(true, sections > 10, "docs/cli.md has a section per command");
        assertEquals(render().contains("## edgelm run\n"), page.contains("## edgelm run\n"));
    }
}
