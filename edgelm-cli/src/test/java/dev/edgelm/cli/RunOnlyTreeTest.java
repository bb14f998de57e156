package dev.edgelm.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** {@code edgelm run ...} parses against a tree with only {@code run} in it; its help and errors are the full tree's. */
class RunOnlyTreeTest {
    @Test
    void runHasTheSameHelpInBothTrees() {
        CommandLine full = Main.commandLine(ProcessContext.none()).getSubcommands().get("run");
        CommandLine only = Main.runOnly(ProcessContext.none()).getSubcommands().get("run");
        assertEquals(full.getUsageMessage(CommandLine.Help.Ansi.OFF), only.getUsageMessage(CommandLine.Help.Ansi.OFF));
        assertEquals(full.getCommandSpec().qualifiedName(), only.getCommandSpec().qualifiedName());
    }

    @Test
    void aBadOptionOfRunIsReportedAsBefore() {
        StringWriter err = new StringWriter();
        int code = Main.execute(new PrintWriter(new StringWriter(), true), new PrintWriter(err, true), "run", "--no-such-flag");
        assertEquals(2, code);
        assertTrue(err.toString().contains("Unknown option: '--no-such-flag'"), err.toString());
        assertTrue(err.toString().contains("Usage: edgelm run"), err.toString());
    }
}
