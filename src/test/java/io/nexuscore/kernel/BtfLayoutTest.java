package io.nexuscore.kernel;

import io.nexuscore.kernel.libbpf.StructLayout;
import io.nexuscore.kernel.maps.SharedStructs;
import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The Java mirrors (SharedStructs) against the BTF of the compiled object, as bpftool prints it:
 * every struct's size and every member's offset must match nexus_shared.h as compiled.
 */
class BtfLayoutTest {

    private static final Pattern STRUCT = Pattern.compile("^\\[\\d+] STRUCT '(\\w+)' size=(\\d+) vlen=(\\d+)");
    private static final Pattern MEMBER = Pattern.compile("^\\s+'(\\w+)' type_id=\\d+ bits_offset=(\\d+)");
    private static final Pattern RODATA = Pattern.compile("^\\[\\d+] DATASEC '\\.rodata' size=\\d+ vlen=(\\d+)");
    private static final Pattern RODATA_VAR = Pattern.compile("offset=(\\d+) size=(\\d+) \\(VAR '(\\w+)'\\)");

    private static Map<String, StructLayout> btf;
    /** The .rodata variables as "name@offset+size". */
    private static List<String> rodataVars = List.of();

    @BeforeAll
    static void dumpBtf() throws IOException, InterruptedException {
        Path object = Files.createTempFile("nexus_classify", ".bpf.o");
        try (InputStream in = BtfLayoutTest.class.getClassLoader().getResourceAsStream(KernelDataPath.OBJECT_RESOURCE)) {
            assertNotNull(in, KernelDataPath.OBJECT_RESOURCE + " missing: the build did not compile the BPF object");
            Files.copy(in, object, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        }
        try {
            io.nexuscore.testing.ExternalProcess.Result bpftool = io.nexuscore.testing.ExternalProcess.run(
                    java.time.Duration.ofSeconds(30), "bpftool", "btf", "dump", "file", object.toString(), "format", "raw");
            List<String> lines = bpftool.output().lines().toList();
            assertEquals(0, bpftool.exitCode(), () -> "bpftool btf dump failed:\n" + String.join("\n", lines));
            btf = parse(lines);
        } finally {
            Files.deleteIfExists(object);
        }
    }

    private static Map<String, StructLayout> parse(List<String> lines) {
        Map<String, StructLayout> structs = new LinkedHashMap<>();
        for (int i = 0; i < lines.size(); i++) {
            Matcher rodata = RODATA.matcher(lines.get(i));
            if (rodata.find()) {
                List<String> vars = new java.util.ArrayList<>();
                for (int v = 1; v <= Integer.parseInt(rodata.group(1)); v++) {
                    Matcher var = RODATA_VAR.matcher(lines.get(i + v));
                    if (var.find()) {
                        vars.add(var.group(3) + "@" + var.group(1) + "+" + var.group(2));
                    }
                }
                rodataVars = vars;
            }
            Matcher struct = STRUCT.matcher(lines.get(i));
            if (!struct.find()) {
                continue;
            }
            Map<String, Integer> offsets = new LinkedHashMap<>();
            int members = Integer.parseInt(struct.group(3));
            for (int m = 1; m <= members; m++) {
                Matcher member = MEMBER.matcher(lines.get(i + m));
                if (member.find()) {
                    offsets.put(member.group(1), Integer.parseInt(member.group(2)) / 8);
                }
            }
            structs.put(struct.group(1), new StructLayout(struct.group(1), Integer.parseInt(struct.group(2)), offsets));
        }
        return structs;
    }

    @Test
    void everyJavaMirrorMatchesTheObjectsBtf() {
        // Every struct checked and reported, so one drift does not hide another.
        assertAll(SharedStructs.ALL.stream().map(mirror -> () -> {
            StructLayout compiled = btf.get(mirror.name());
            assertNotNull(compiled, "struct " + mirror.name() + " not in the object's BTF");
            assertEquals(compiled, mirror, "struct " + mirror.name());
        }));
    }

    @Test
    void everyStructOfTheSharedHeaderHasAJavaMirror() throws IOException {
        // A struct added to nexus_shared.h without a layout in SharedStructs.ALL would go unchecked.
        Pattern declaration = Pattern.compile("(?m)^struct (\\w+) \\{");
        Matcher m = declaration.matcher(Files.readString(Path.of("src/main/bpf/nexus_shared.h")));
        java.util.Set<String> header = new java.util.TreeSet<>();
        while (m.find()) {
            header.add(m.group(1));
        }
        java.util.Set<String> mirrored = new java.util.TreeSet<>();
        SharedStructs.ALL.forEach(layout -> mirrored.add(layout.name()));
        assertEquals(header, mirrored, "structs of nexus_shared.h vs SharedStructs.ALL");
    }

    @Test
    void rodataHoldsExactlyTheLoadSettings() {
        // The loader writes struct load_settings over the whole of .rodata (BpfObject.writeRodata).
        assertEquals(List.of("settings@0+" + SharedStructs.LOAD_SETTINGS.size()), rodataVars,
                ".rodata must hold struct load_settings alone");
    }
}
