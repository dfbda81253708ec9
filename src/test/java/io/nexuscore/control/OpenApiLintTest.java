package io.nexuscore.control;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * openapi.yaml passes Redocly's recommended rules with no error; among them security-defined, so
 * every operation states its security (the bearer scheme, or explicitly none). Redocly CLI comes
 * from npm (npx; REDOCLY names a ready binary instead). Without npx it skips, except in CI.
 */
class OpenApiLintTest {

    @Test
    void redoclyRecommendedRulesReportNoError() throws Exception {
        String redocly = System.getenv("REDOCLY");
        String[] command = redocly != null && Files.isExecutable(Path.of(redocly))
                ? new String[] {redocly, "lint", "--extends", "recommended", "--format", "stylish", "openapi.yaml"}
                : new String[] {ExternalTool.require("/usr/bin/npx", "npm").toString(), "--yes", "@redocly/cli@2.77.0",
                        "lint", "--extends", "recommended", "--format", "stylish", "openapi.yaml"};
        ExternalTool.Result lint = ExternalTool.run("", command);
        assertEquals(0, lint.exitCode(), lint.output());
        assertTrue(lint.output().contains("valid"), lint.output());
    }
}
