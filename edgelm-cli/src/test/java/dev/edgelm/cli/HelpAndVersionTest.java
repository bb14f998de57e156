package dev.edgelm.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.edgelm.util.BuildInfo;
import org.junit.jupiter.api.Test;

/** {@code edgelm --help}: user commands first, developer tools after; MODEL forms in each help; completion; version. */
class HelpAndVersionTest {
    @Test
    void helpListsRunFirstAndUserCommandsBeforeDeveloperTools() {
        String help = CliRunner.run("--help").out();
        int commands = help.indexOf("Commands:");
        int tools = help.indexOf("Developer tools:");
        assertTrue(commands >= 0 && tools > commands, help);
        String userPart = help.substring(commands, tools);
        String toolPart = help.substring(tools);
        assertTrue(userPart.strip().split("\n")[1].strip().startsWith("run "), "run first:\n" + help);
        for (String c : new String[] {"pull", "list", "rm", "benchmark", "inspect", "convert"}) {
            assertTrue(userPart.matches("(?s).*\n  " + c + "[ ,].*"), c + " among the user commands:\n" + help);
        }
        for (String c : new String[] {"tokenize", "template", "score", "synth"}) {
            assertTrue(toolPart.contains("\n  " + c + " "), c + " among the developer tools:\n" + help);
        }
        assertTrue(!help.contains("generate-completion  "), "the completion command is hidden from the list");
    }

    @Test
    void everyCommandThatTakesAModelNamesEveryForm() {
        for (String command : new String[] {"run", "benchmark", "inspect", "tokenize", "template", "score", "convert"}) {
            String help = CliRunner.run(command, "--help").out().replaceAll("\\s+", " ");
            for (String form : new String[] {".gguf", "checkpoint folder", "Hugging Face model id", "@revision"}) {
                assertTrue(help.contains(form), command + " --help names '" + form + "':\n" + help);
            }
        }
    }

    @Test
    void completionScriptAndVersion() {
        CliRunner completion = CliRunner.run("generate-completion");
        assertEquals(0, completion.exitCode(), completion.err());
        assertTrue(completion.out().contains("complete -F") && completion.out().contains("edgelm"), completion.out());
        assertTrue(completion.out().contains("benchmark") && completion.out().contains("pull"));
        String version = CliRunner.run("--version").out();
        assertTrue(version.startsWith("edgelm " + BuildInfo.version() + " (commit "), version);
        assertTrue(!BuildInfo.version().equals("dev") && BuildInfo.commit().matches("[0-9a-f]{7,40}|unknown"),
                "the build wrote its version and commit: " + version);
    }
}
