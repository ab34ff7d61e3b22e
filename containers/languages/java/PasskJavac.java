// passk's Java compile server: `javac ARGS Main.java` for one program per request, in one long-lived JVM,
// so that what every javac command pays again (the JVM's start, loading and JIT-compiling javac itself,
// reading the platform's class index) is paid once per container. It calls javac's own command-line
// entry point (com.sun.tools.javac.Main.compile) with the command's arguments, on the program's exact
// bytes in a file of its own: the same compiler, option parsing, diagnostics and exit status as the
// command (0 success, 1 errors, 2 bad command line, 3 system error, 4 abnormal end). It never runs the
// program it compiles.
//
// It talks only to the supervisor, on its stdin and stdout: one JSON line in,
// {"args": [...], "file": "Main.java", "source_b64": "..."}; one JSON line out,
// {"exit_code": n, "output": "...", "files_b64": {"Problem.class": "...", ...}}. `-d .` in the arguments
// means the request's own output directory. Its files live in a directory only its user can read,
// removed after each request.
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

public final class PasskJavac {
    private static int requests = 0;

    public static void main(String[] argv) throws Exception {
        InputStream in = System.in;
        OutputStream out = new java.io.FileOutputStream(java.io.FileDescriptor.out);
        String root = argv.length > 0 ? argv[0] : "/tmp/passk-javac";
        reply(out, "{\"ready\": true, \"version\": " + quote(System.getProperty("java.version")) + "}");
        String line;
        while ((line = readLine(in)) != null) {
            String answer;
            try {
                answer = compile((Map<?, ?>) new Json(line).value(), root);
            } catch (OutOfMemoryError e) {
                System.err.println("java.lang.OutOfMemoryError: " + e.getMessage());
                System.err.flush();
                Runtime.getRuntime().halt(3);
                return;
            } catch (Throwable e) {
                StringWriter trace = new StringWriter();
                e.printStackTrace(new PrintWriter(trace));
                String text = trace.toString();
                answer = "{\"exit_code\": 3, \"output\": " + quote("passk: the Java compiler failed: "
                        + text.substring(0, Math.min(2000, text.length()))) + ", \"files_b64\": {}}";
            }
            reply(out, answer);
            // A large compile leaves the heap large: give it back before the program runs in the same
            // container (with -XX:MaxHeapFreeRatio a full collection returns what is free to the system).
            if (Runtime.getRuntime().totalMemory() > (256L << 20)) {
                System.gc();
            }
        }
    }

    private static String compile(Map<?, ?> request, String root) throws IOException {
        Path dir = Paths.get(root, "r" + (++requests));
        Files.createDirectories(dir.getParent(), PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        Files.createDirectory(dir);
        try {
            Path src = dir.resolve("src");
            Path classes = dir.resolve("classes");
            Files.createDirectory(src);
            Files.createDirectory(classes);
            String file = (String) request.get("file");
            if (file == null || file.contains("/") || file.startsWith(".")) {
                throw new IllegalArgumentException("bad file name");
            }
            Files.write(src.resolve(file), Base64.getDecoder().decode((String) request.get("source_b64")));
            List<String> args = new ArrayList<>();
            List<?> given = (List<?>) request.get("args");
            for (int i = 0; i < given.size(); i++) {
                String arg = (String) given.get(i);
                args.add(arg);
                if (arg.equals("-d") && i + 1 < given.size() && given.get(i + 1).equals(".")) {
                    args.add(classes.toString());
                    i++;
                }
            }
            args.add(src.resolve(file).toString());
            StringWriter text = new StringWriter();
            int code;
            try (PrintWriter writer = new PrintWriter(text)) {
                code = com.sun.tools.javac.Main.compile(args.toArray(new String[0]), writer);
            }
            // the command is given a relative file name: the diagnostics name the file as it would
            String output = text.toString().replace(src.toString() + "/", "");
            Map<String, String> files = new LinkedHashMap<>();
            if (code == 0) {
                try (Stream<Path> walk = Files.walk(classes)) {
                    for (Path p : (Iterable<Path>) walk.filter(Files::isRegularFile)::iterator) {
                        files.put(classes.relativize(p).toString(), Base64.getEncoder().encodeToString(Files.readAllBytes(p)));
                    }
                }
            }
            StringBuilder reply = new StringBuilder("{\"exit_code\": ").append(code).append(", \"output\": ")
                    .append(quote(output)).append(", \"files_b64\": {");
            String sep = "";
            for (Map.Entry<String, String> e : files.entrySet()) {
                reply.append(sep).append(quote(e.getKey())).append(": ").append(quote(e.getValue()));
                sep = ", ";
            }
            return reply.append("}}").toString();
        } finally {
            try (Stream<Path> walk = Files.walk(dir)) {
                walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    private static void reply(OutputStream out, String line) throws IOException {
        out.write((line + "\n").getBytes(StandardCharsets.US_ASCII));
        out.flush();
    }

    private static String readLine(InputStream in) throws IOException {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        int c;
        while ((c = in.read()) != -1 && c != '\n') {
            buf.write(c);
        }
        if (c == -1 && buf.size() == 0) {
            return null;
        }
        return buf.toString(StandardCharsets.UTF_8);
    }

    /** A JSON string, ASCII only (every other character, a lone surrogate included, as \\uXXXX). */
    static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c < 0x20 || c > 0x7e) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.append('"').toString();
    }

    /** Just enough JSON for a request: objects, arrays, strings, numbers, true, false, null. */
    static final class Json {
        private final String s;
        private int i = 0;

        Json(String s) {
            this.s = s;
        }

        Object value() {
            skip();
            char c = s.charAt(i);
            if (c == '{') {
                Map<String, Object> m = new LinkedHashMap<>();
                i++;
                skip();
                if (s.charAt(i) == '}') {
                    i++;
                    return m;
                }
                while (true) {
                    skip();
                    String key = string();
                    skip();
                    expect(':');
                    m.put(key, value());
                    skip();
                    if (s.charAt(i++) == '}') {
                        return m;
                    }
                }
            }
            if (c == '[') {
                List<Object> l = new ArrayList<>();
                i++;
                skip();
                if (s.charAt(i) == ']') {
                    i++;
                    return l;
                }
                while (true) {
                    l.add(value());
                    skip();
                    if (s.charAt(i++) == ']') {
                        return l;
                    }
                }
            }
            if (c == '"') {
                return string();
            }
            int start = i;
            while (i < s.length() && ",}] \t\r\n".indexOf(s.charAt(i)) < 0) {
                i++;
            }
            String word = s.substring(start, i);
            switch (word) {
                case "true": return Boolean.TRUE;
                case "false": return Boolean.FALSE;
                case "null": return null;
                default: return Double.valueOf(word);
            }
        }

        private String string() {
            expect('"');
            StringBuilder b = new StringBuilder();
            while (true) {
                char c = s.charAt(i++);
                if (c == '"') {
                    return b.toString();
                }
                if (c != '\\') {
                    b.append(c);
                    continue;
                }
                char e = s.charAt(i++);
                switch (e) {
                    case 'n': b.append('\n'); break;
                    case 't': b.append('\t'); break;
                    case 'r': b.append('\r'); break;
                    case 'b': b.append('\b'); break;
                    case 'f': b.append('\f'); break;
                    case 'u': b.append((char) Integer.parseInt(s.substring(i, i + 4), 16)); i += 4; break;
                    default: b.append(e);
                }
            }
        }

        private void expect(char c) {
            if (s.charAt(i++) != c) {
                throw new IllegalArgumentException("bad JSON at " + (i - 1));
            }
        }

        private void skip() {
            while (i < s.length() && " \t\r\n".indexOf(s.charAt(i)) >= 0) {
                i++;
            }
        }
    }
}
