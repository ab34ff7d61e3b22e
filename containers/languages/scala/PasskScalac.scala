// passk's Scala compile server: `scalac ARGS main.scala` for one program per request, in one long-lived
// JVM, so that what every scalac command pays again (the JVM's start, loading and JIT-compiling the
// compiler) is paid once per container. Each request runs the command's own driver (scala.tools.nsc.Driver's
// process, as scala.tools.nsc.Main runs it: new settings and a new compiler per call) with its arguments on the
// program's exact bytes in a file of its own: the same compiler, option parsing, diagnostics and exit
// status (0 success, 1 errors or a compiler crash). It never runs the program it compiles.
//
// It talks only to the supervisor, on its stdin and stdout: one JSON line in,
// {"args": [...], "file": "main.scala", "source_b64": "..."}; one JSON line out,
// {"exit_code": n, "output": "...", "files_b64": {"Problem.class": "...", ...}}. `-d .` in the arguments
// means the request's own output directory. Its files live in a directory only its user can read,
// removed after each request.
import java.io.{ByteArrayOutputStream, File, FileOutputStream, FileDescriptor, InputStream, OutputStream, PrintStream}
import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Path, Paths}
import java.nio.file.attribute.PosixFilePermissions
import java.util.Base64

/** scalac's driver as its command's (scala.tools.nsc.Main: a new Global on the settings and reporter that
  * `process` makes from the arguments), saying whether the compile had no error: the command's exit 0. */
object Scalac extends scala.tools.nsc.Driver {
  override def newCompiler(): scala.tools.nsc.Global = scala.tools.nsc.Global(settings, reporter)

  def compile(args: Array[String]): Boolean = {
    process(args)
    !reporter.hasErrors
  }
}

object PasskScalac {
  private var requests = 0

  def main(argv: Array[String]): Unit = {
    val in = System.in
    val out = new FileOutputStream(FileDescriptor.out)
    val root = if (argv.nonEmpty) argv(0) else "/tmp/passk-scalac"
    reply(out, "{\"ready\": true, \"version\": " + quote(scala.util.Properties.versionNumberString) + "}")
    var line = readLine(in)
    while (line != null) {
      val answer =
        try compile(new Json(line).value().asInstanceOf[Map[String, Any]], root)
        catch {
          case e: OutOfMemoryError =>
            System.err.println("java.lang.OutOfMemoryError: " + e.getMessage)
            System.err.flush()
            Runtime.getRuntime.halt(3)
            ""
          case e: Throwable =>
            val text = trace(e)
            "{\"exit_code\": 1, \"output\": " + quote("passk: the Scala compiler failed: " + text.take(2000)) +
              ", \"files_b64\": {}}"
        }
      reply(out, answer)
      // a large compile leaves the heap large: give it back before the program runs in the same container
      if (Runtime.getRuntime.totalMemory > (256L << 20)) System.gc()
      line = readLine(in)
    }
  }

  private def trace(e: Throwable): String = {
    val buf = new ByteArrayOutputStream()
    val ps = new PrintStream(buf, true, "UTF-8")
    e.printStackTrace(ps)
    ps.flush()
    buf.toString("UTF-8")
  }

  private def compile(request: Map[String, Any], root: String): String = {
    requests += 1
    val dir = Paths.get(root, "r" + requests)
    Files.createDirectories(dir.getParent, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")))
    Files.createDirectory(dir)
    try {
      val src = Files.createDirectory(dir.resolve("src"))
      val classes = Files.createDirectory(dir.resolve("classes"))
      val file = request("file").asInstanceOf[String]
      require(!file.contains("/") && !file.startsWith("."), "bad file name")
      Files.write(src.resolve(file), Base64.getDecoder.decode(request("source_b64").asInstanceOf[String]))
      val given = request("args").asInstanceOf[List[Any]].map(_.asInstanceOf[String])
      val args = Vector.newBuilder[String]
      var rest = given
      while (rest.nonEmpty) {
        if (rest.head == "-d" && rest.tail.headOption.contains(".")) {
          args += "-d" += classes.toString
          rest = rest.tail.tail
        } else {
          args += rest.head
          rest = rest.tail
        }
      }
      args += src.resolve(file).toString
      val text = new ByteArrayOutputStream()
      val stream = new PrintStream(text, true, "UTF-8")
      val ok = Console.withErr(stream) { Console.withOut(stream) { Scalac.compile(args.result().toArray) } }
      stream.flush()
      // the command is given a relative file name: the diagnostics name the file as it would
      val output = text.toString("UTF-8").replace(src.toString + "/", "")
      val files = if (ok) walk(classes.toFile).map(f => classes.relativize(f.toPath).toString -> f) else Nil
      files.map { case (name, f) => quote(name) + ": " + quote(Base64.getEncoder.encodeToString(Files.readAllBytes(f.toPath))) }
        .mkString("{\"exit_code\": " + (if (ok) 0 else 1) + ", \"output\": " + quote(output) + ", \"files_b64\": {",
          ", ", "}}")
    } finally {
      walk(dir.toFile, dirs = true).reverse.foreach(_.delete())
    }
  }

  /** The files under `dir` (with `dirs`, the directories too, each before what it holds). */
  private def walk(dir: File, dirs: Boolean = false): List[File] = {
    val children = Option(dir.listFiles).map(_.toList.sortBy(_.getName)).getOrElse(Nil)
    (if (dirs) List(dir) else Nil) ++ children.flatMap(c => if (c.isDirectory) walk(c, dirs) else List(c))
  }

  private def reply(out: OutputStream, line: String): Unit = {
    out.write((line + "\n").getBytes(StandardCharsets.US_ASCII))
    out.flush()
  }

  private def readLine(in: InputStream): String = {
    val buf = new ByteArrayOutputStream()
    var c = in.read()
    while (c != -1 && c != '\n') {
      buf.write(c)
      c = in.read()
    }
    if (c == -1 && buf.size == 0) null else buf.toString("UTF-8")
  }

  /** A JSON string, ASCII only (every other character as \\uXXXX). */
  def quote(s: String): String = {
    val b = new StringBuilder("\"")
    s.foreach { c =>
      if (c == '"' || c == '\\') b.append('\\').append(c)
      else if (c < 0x20 || c > 0x7e) b.append(f"\\u${c.toInt}%04x")
      else b.append(c)
    }
    b.append('"').toString
  }

  /** The JSON a request is made of: objects, arrays, strings, numbers, true, false, null. */
  final class Json(s: String) {
    private var i = 0

    def value(): Any = {
      skip()
      s.charAt(i) match {
        case '{' => i += 1; items('}', () => { skip(); val k = string(); skip(); expect(':'); k -> value() }).toMap
        case '[' => i += 1; items(']', () => value())
        case '"' => string()
        case _ =>
          val start = i
          while (i < s.length && ",}] \t\r\n".indexOf(s.charAt(i)) < 0) i += 1
          s.substring(start, i) match {
            case "true" => true
            case "false" => false
            case "null" => null
            case word => word.toDouble
          }
      }
    }

    private def items[T](close: Char, item: () => T): List[T] = {
      skip()
      if (s.charAt(i) == close) { i += 1; Nil }
      else {
        val out = List.newBuilder[T]
        var more = true
        while (more) {
          out += item()
          skip()
          val c = s.charAt(i)
          i += 1
          if (c == close) more = false else if (c != ',') throw new IllegalArgumentException("bad JSON at " + (i - 1))
        }
        out.result()
      }
    }

    private def string(): String = {
      expect('"')
      val b = new StringBuilder
      var c = s.charAt(i)
      while (c != '"') {
        i += 1
        if (c != '\\') b.append(c)
        else {
          val e = s.charAt(i)
          i += 1
          e match {
            case 'n' => b.append('\n')
            case 't' => b.append('\t')
            case 'r' => b.append('\r')
            case 'b' => b.append('\b')
            case 'f' => b.append('\f')
            case 'u' => b.append(Integer.parseInt(s.substring(i, i + 4), 16).toChar); i += 4
            case other => b.append(other)
          }
        }
        c = s.charAt(i)
      }
      i += 1
      b.toString
    }

    private def expect(c: Char): Unit = {
      if (s.charAt(i) != c) throw new IllegalArgumentException("bad JSON at " + i)
      i += 1
    }

    private def skip(): Unit = while (i < s.length && " \t\r\n".indexOf(s.charAt(i)) >= 0) i += 1
  }
}
