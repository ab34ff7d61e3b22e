// passk's C# compile server: `mcs ARGS main.cs -out:main.exe` for one program per request, in one
// long-lived mono process, so that what every mcs command pays again (mono's start, JIT-compiling the
// compiler, loading the referenced assemblies) is paid once per container. Each request does what mcs's
// Main does (parse the arguments, compile, write the closing line), then resets the compiler's static
// state as its entry point for callers does, with the command's arguments on the program's exact bytes in
// a file of its own: the same compiler, option parsing and diagnostics; exit status 0 on success, 1
// otherwise, as the command's. It never runs the program it compiles.
//
// It talks only to the supervisor, on its stdin and stdout: one JSON line in,
// {"args": [...], "file": "main.cs", "source_b64": "..."}; one JSON line out,
// {"exit_code": n, "output": "...", "files_b64": {"main.exe": "..."}}. `-out:NAME` in the arguments names
// the file it returns. Its files live in a directory only its user can read, removed after each request.
using System;
using System.Collections.Generic;
using System.IO;
using System.Reflection;
using System.Text;

static class PasskMcs
{
    static int requests = 0;

    static int Main(string[] argv)
    {
        var input = Console.OpenStandardInput();
        var output = Console.OpenStandardOutput();
        string root = argv.Length > 0 ? argv[0] : "/tmp/passk-mcs";
        Reply(output, "{\"ready\": true, \"version\": " + Quote(Environment.Version.ToString()) + "}");
        string line;
        while ((line = ReadLine(input)) != null) {
            string answer;
            try {
                answer = Compile((Dictionary<string, object>) new Json(line).Value(), root);
            } catch (OutOfMemoryException e) {
                Console.Error.WriteLine("System.OutOfMemoryException: " + e.Message);
                Console.Error.Flush();
                Environment.Exit(3);
                return 3;
            } catch (Exception e) {
                string text = e.ToString();
                answer = "{\"exit_code\": 1, \"output\": " + Quote("passk: the C# compiler failed: "
                    + text.Substring(0, Math.Min(2000, text.Length))) + ", \"files_b64\": {}}";
            }
            Reply(output, answer);
        }
        return 0;
    }

    static string Compile(Dictionary<string, object> request, string root)
    {
        if (!Directory.Exists(root)) {
            Directory.CreateDirectory(root);
        }
        string dir = Path.Combine(root, "r" + (++requests));
        Directory.CreateDirectory(dir);
        try {
            string file = (string) request["file"];
            if (file.Contains("/") || file.StartsWith(".")) {
                throw new ArgumentException("bad file name");
            }
            File.WriteAllBytes(Path.Combine(dir, file), Convert.FromBase64String((string) request["source_b64"]));
            var args = new List<string>();
            string target = null;
            foreach (object given in (List<object>) request["args"]) {
                string arg = (string) given;
                if (arg.StartsWith("-out:")) {
                    target = arg.Substring(5);
                    if (target.Contains("/") || target.StartsWith(".")) {
                        throw new ArgumentException("bad output name");
                    }
                    arg = "-out:" + Path.Combine(dir, target);
                }
                args.Add(arg);
            }
            args.Add(Path.Combine(dir, file));
            var text = new StringWriter();
            bool ok = Run(args.ToArray(), text);
            // the command is given a relative file name: the diagnostics name the file as it would
            string said = text.ToString().Replace(dir + "/", "");
            var reply = new StringBuilder("{\"exit_code\": ").Append(ok ? 0 : 1).Append(", \"output\": ")
                .Append(Quote(said)).Append(", \"files_b64\": {");
            if (ok && target != null && File.Exists(Path.Combine(dir, target))) {
                reply.Append(Quote(target)).Append(": ")
                    .Append(Quote(Convert.ToBase64String(File.ReadAllBytes(Path.Combine(dir, target)))));
            }
            return reply.Append("}}").ToString();
        } finally {
            Directory.Delete(dir, true);
        }
    }

    /// What mcs's Main does, with its diagnostics and its closing line written to `text`, and the compiler's
    /// static state reset after (as mcs's entry point for callers does).
    static bool Run(string[] args, TextWriter text)
    {
        try {
            var parser = new Mono.CSharp.CommandLineParser(text);
            var settings = parser.ParseArguments(args);
            if (settings == null) {
                return false;
            }
            if (parser.HasBeenStopped) {
                return true;
            }
            var printer = new Mono.CSharp.StreamReportPrinter(text);
            // mcs's Driver is internal to it: made and called by reflection
            var context = new Mono.CSharp.CompilerContext(settings, printer);
            var driverType = typeof(Mono.CSharp.CompilerContext).Assembly.GetType("Mono.CSharp.Driver", true);
            const BindingFlags any = BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic;
            object driver = Activator.CreateInstance(driverType, any, null, new object[] { context }, null);
            bool compiled = (bool) driverType.GetMethod("Compile", any, null, Type.EmptyTypes, null).Invoke(driver, null);
            if (compiled && printer.ErrorsCount == 0) {
                if (printer.WarningsCount > 0) {
                    text.WriteLine("Compilation succeeded - {0} warning(s)", printer.WarningsCount);
                }
                return true;
            }
            text.WriteLine("Compilation failed: {0} error(s), {1} warnings", printer.ErrorsCount, printer.WarningsCount);
            return false;
        } finally {
            Mono.CSharp.CompilerCallableEntryPoint.Reset();
        }
    }

    static void Reply(Stream output, string line)
    {
        byte[] data = Encoding.ASCII.GetBytes(line + "\n");
        output.Write(data, 0, data.Length);
        output.Flush();
    }

    static string ReadLine(Stream input)
    {
        var buf = new MemoryStream();
        int c;
        while ((c = input.ReadByte()) != -1 && c != '\n') {
            buf.WriteByte((byte) c);
        }
        if (c == -1 && buf.Length == 0) {
            return null;
        }
        return Encoding.UTF8.GetString(buf.ToArray());
    }

    /// A JSON string, ASCII only (every other character as \uXXXX).
    static string Quote(string s)
    {
        var b = new StringBuilder("\"");
        foreach (char c in s) {
            if (c == '"' || c == '\\') {
                b.Append('\\').Append(c);
            } else if (c < 0x20 || c > 0x7e) {
                b.Append("\\u").Append(((int) c).ToString("x4"));
            } else {
                b.Append(c);
            }
        }
        return b.Append('"').ToString();
    }

    /// The JSON a request is made of: objects, arrays, strings, numbers, true, false, null.
    sealed class Json
    {
        readonly string s;
        int i = 0;

        public Json(string s)
        {
            this.s = s;
        }

        public object Value()
        {
            Skip();
            char c = s[i];
            if (c == '{') {
                i++;
                var map = new Dictionary<string, object>();
                Items('}', () => { Skip(); string key = Str(); Skip(); Expect(':'); map[key] = Value(); });
                return map;
            }
            if (c == '[') {
                i++;
                var list = new List<object>();
                Items(']', () => list.Add(Value()));
                return list;
            }
            if (c == '"') {
                return Str();
            }
            int start = i;
            while (i < s.Length && ",}] \t\r\n".IndexOf(s[i]) < 0) {
                i++;
            }
            string word = s.Substring(start, i - start);
            if (word == "true") return true;
            if (word == "false") return false;
            if (word == "null") return null;
            return double.Parse(word, System.Globalization.CultureInfo.InvariantCulture);
        }

        void Items(char close, Action item)
        {
            Skip();
            if (s[i] == close) {
                i++;
                return;
            }
            while (true) {
                item();
                Skip();
                char c = s[i++];
                if (c == close) {
                    return;
                }
                if (c != ',') {
                    throw new ArgumentException("bad JSON at " + (i - 1));
                }
            }
        }

        string Str()
        {
            Expect('"');
            var b = new StringBuilder();
            while (true) {
                char c = s[i++];
                if (c == '"') {
                    return b.ToString();
                }
                if (c != '\\') {
                    b.Append(c);
                    continue;
                }
                char e = s[i++];
                switch (e) {
                    case 'n': b.Append('\n'); break;
                    case 't': b.Append('\t'); break;
                    case 'r': b.Append('\r'); break;
                    case 'b': b.Append('\b'); break;
                    case 'f': b.Append('\f'); break;
                    case 'u': b.Append((char) Convert.ToInt32(s.Substring(i, 4), 16)); i += 4; break;
                    default: b.Append(e); break;
                }
            }
        }

        void Expect(char c)
        {
            if (s[i] != c) {
                throw new ArgumentException("bad JSON at " + i);
            }
            i++;
        }

        void Skip()
        {
            while (i < s.Length && " \t\r\n".IndexOf(s[i]) >= 0) {
                i++;
            }
        }
    }
}
