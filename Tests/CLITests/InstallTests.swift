import Foundation
import Lockstep
import LockstepFiles
import LockstepTestSupport
import Testing

/// `Scripts/install.sh` as a user runs it, into a temporary prefix (the built debug binary and C API
/// library stand in for the release ones it would build: `LOCKSTEP_INSTALL_BINARY`,
/// `LOCKSTEP_INSTALL_LIBRARY`).
@Suite("Scripts/install.sh installs the tool, its man page and completions, the C API, and removes exactly them")
struct InstallTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
    static let files = ["bin/lockstep", "share/man/man1/lockstep.1", "share/bash-completion/completions/lockstep",
                        "share/zsh/site-functions/_lockstep", "share/fish/vendor_completions.d/lockstep.fish",
                        "lib/liblockstep-audiotoolbox.so.0", "lib/liblockstep-audiotoolbox.so",
                        "lib/pkgconfig/lockstep-audiotoolbox.pc"] + headers
    /// The C API's headers as installed: Apple's layout under include/lockstep, in the script's order.
    static let headers: [String] = {
        let folder = root + "/Sources/LockstepAudioToolbox/include"
        let apple = (FileManager.default.enumerator(atPath: folder)?.compactMap { $0 as? String } ?? [])
            .filter { $0.hasSuffix(".h") }.sorted()
        return (["CAudioQueueTypes.h"] + apple).map { "include/lockstep/" + $0 }
    }()
    static let library = CLI.executable(named: "liblockstep-audiotoolbox.so")

    func script(_ arguments: [String], environment: [String: String] = [:]) throws -> CLI.Result {
        try CLI.run([Self.root + "/Scripts/install.sh"] + arguments,
                    environment: ["LOCKSTEP_INSTALL_BINARY": CLI.binary, "LOCKSTEP_INSTALL_LIBRARY": Self.library]
                        .merging(environment) { $1 },
                    timeout: 60, executable: "/bin/bash")
    }

    @Test("install, run the installed tool, read its man page, complete with bash; reinstall over it; uninstall leaves nothing")
    func roundTrip() throws {
        let temp = try TemporaryTestDirectory(prefix: "lockstep-install")
        let prefix = temp.path + "/prefix"
        let installed = try script([prefix])
        #expect(installed.status == 0, "\(installed.stderr)")
        for file in Self.files {
            #expect(FileManager.default.fileExists(atPath: prefix + "/" + file), "\(file) is missing")
        }
        #expect(FileManager.default.isExecutableFile(atPath: prefix + "/bin/lockstep"))
        let version = try CLI.run(["--version"], executable: prefix + "/bin/lockstep")
        #expect(version.status == 0 && !version.stdout.isEmpty)
        let page = try String(contentsOfFile: prefix + "/share/man/man1/lockstep.1", encoding: .utf8)
        #expect(page == (try String(contentsOfFile: Self.root + "/Docs/lockstep.1", encoding: .utf8)))
        // bash loads the completion and completes the subcommands.
        let completion = try CLI.run(["-c", """
            source \(prefix)/share/bash-completion/completions/lockstep
            COMP_WORDS=(lockstep se); COMP_CWORD=1; COMP_LINE="lockstep se"; COMP_POINT=${#COMP_LINE}
            _lockstep; printf '%s\\n' "${COMPREPLY[@]}"
            """], executable: "/bin/bash")
        #expect(completion.stdout.split(separator: "\n").contains("session"), "\(completion.stdout) \(completion.stderr)")
        // A second install replaces its own files.
        #expect(try script([prefix]).status == 0)
        let removed = try script(["--uninstall", prefix])
        #expect(removed.status == 0, "\(removed.stderr)")
        let left = FileManager.default.enumerator(atPath: prefix)?.compactMap { $0 as? String }
            .filter { !((try? FileManager.default.attributesOfItem(atPath: prefix + "/" + $0)[.type]) as? FileAttributeType == .typeDirectory) }
        #expect(left == [], "left behind: \(left ?? [])")
    }

    @Test("a C program compiles against the installed headers and library through the installed pkg-config file, and renders a file offline exactly")
    func installedCAPI() throws {
        let temp = try TemporaryTestDirectory(prefix: "lockstep-install")
        let prefix = temp.path + "/prefix"
        let installed = try script([prefix])
        #expect(installed.status == 0, "\(installed.stderr)")
        // Only the installed files: no build-tree folder in the flags.
        let environment = ["PKG_CONFIG_PATH": prefix + "/lib/pkgconfig", "LD_LIBRARY_PATH": prefix + "/lib"]
        let flags = try CLI.run(["--cflags", "--libs", "lockstep-audiotoolbox"], environment: environment,
                                executable: "/usr/bin/pkg-config")
        #expect(flags.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
                == "-I\(prefix)/include/lockstep -L\(prefix)/lib -llockstep-audiotoolbox", "\(flags.stdout)\(flags.stderr)")
        let program = temp.file("aqoffline")
        let command = "cc '\(Self.root)/Examples/C/aqoffline.c' -o '\(program)' $(pkg-config --cflags --libs lockstep-audiotoolbox)"
        let compiled = try CLI.run(["-c", command], environment: environment, executable: "/bin/sh")
        #expect(compiled.status == 0, "\(compiled.stderr)")
        let ldd = try CLI.run([program], environment: environment, executable: "/usr/bin/ldd")
        #expect(ldd.stdout.contains("liblockstep-audiotoolbox.so => \(prefix)/lib/liblockstep-audiotoolbox.so"), "\(ldd.stdout)")
        // 0.25 s of a stereo 24-bit signal, rendered through the queue to a float WAV.
        let frames = 12_000
        let samples: [Float] = (0..<(frames * 2)).map { (index: Int) -> Float in
            let value: Int = (index * 7919) % 16_001 - 8_000
            return Float(value) / 8_388_608
        }
        let source = temp.file("in.wav"), output = temp.file("out.wav")
        try FileFixtures.writeWAV(path: source, samples: samples,
                                  format: StreamFormat(sampleRate: 48000, channelCount: 2, sampleFormat: .int24))
        let rendered = try CLI.run([source, output], environment: environment, executable: program)
        #expect(rendered.status == 0 && rendered.stdout.contains("rendered \(frames) frames"), "\(rendered.stdout)\(rendered.stderr)")
        let reader = try AudioFileReader(path: output)
        var out = [Float](repeating: 0, count: Int(reader.frameCount) * 2)
        _ = try out.withUnsafeMutableBufferPointer { try reader.read(into: $0.baseAddress!, frames: Int(reader.frameCount)) }
        #expect(reader.frameCount == Int64(frames) && out == samples)
        #expect(try script(["--uninstall", prefix]).status == 0)
        #expect(!FileManager.default.fileExists(atPath: prefix + "/include/lockstep"))
    }

    @Test("it refuses to overwrite a lockstep it did not install, a relative prefix, and an uninstall with nothing installed")
    func refusals() throws {
        let temp = try TemporaryTestDirectory(prefix: "lockstep-install")
        let prefix = temp.path + "/prefix"
        try FileManager.default.createDirectory(atPath: prefix + "/bin", withIntermediateDirectories: true)
        try "#!/bin/sh\necho another\n".write(toFile: prefix + "/bin/lockstep", atomically: true, encoding: .utf8)
        let refused = try script([prefix])
        #expect(refused.status != 0 && refused.stderr.contains("was not installed by this script"), "\(refused.stderr)")
        #expect(try String(contentsOfFile: prefix + "/bin/lockstep", encoding: .utf8).contains("another"))
        #expect(!FileManager.default.fileExists(atPath: prefix + "/share/man/man1/lockstep.1"))
        let relative = try script(["relative/prefix"])
        #expect(relative.status != 0 && relative.stderr.contains("absolute path"), "\(relative.stderr)")
        let nothing = try script(["--uninstall", temp.path + "/empty"])
        #expect(nothing.status != 0 && nothing.stderr.contains("nothing to remove"), "\(nothing.stderr)")
    }

    @Test("DESTDIR stages the files under another root, with the manifest naming them under the prefix")
    func staging() throws {
        let temp = try TemporaryTestDirectory(prefix: "lockstep-install")
        let stage = temp.path + "/stage"
        #expect(try script(["/usr"], environment: ["DESTDIR": stage]).status == 0)
        for file in Self.files { #expect(FileManager.default.fileExists(atPath: stage + "/usr/" + file), "\(file)") }
        let manifest = try String(contentsOfFile: stage + "/usr/share/lockstep/install-manifest", encoding: .utf8)
        #expect(manifest.split(separator: "\n").map(String.init) == Self.files.map { "/usr/" + $0 })
    }

    /// What the -dev package holds: the headers, the link for `-l` and the pkg-config file.
    static let devFiles = ["lib/liblockstep-audiotoolbox.so", "lib/pkgconfig/lockstep-audiotoolbox.pc"] + headers

    @Test("Scripts/package.sh builds the runtime .deb (tool, man page, completions, library; no header) and the -dev .deb (headers, .so link, pkg-config file); dpkg installs both into a root of its own and removes every file again")
    func debianPackages() throws {
        let temp = try TemporaryTestDirectory(prefix: "lockstep-package")
        let built = try CLI.run([Self.root + "/Scripts/package.sh", temp.path],
                                environment: ["LOCKSTEP_INSTALL_BINARY": CLI.binary, "LOCKSTEP_INSTALL_LIBRARY": Self.library,
                                              "LOCKSTEP_PACKAGE_SKIP_UNOWNED": "1",
                                              "LOCKSTEP_PACKAGE_COMPRESSION": "none"],
                                timeout: 120, executable: "/bin/bash")
        #expect(built.status == 0, "\(built.stderr)")
        let debs = try FileManager.default.contentsOfDirectory(atPath: temp.path).filter { $0.hasSuffix(".deb") }
        let runtime = temp.path + "/" + (try #require(debs.first { $0.hasPrefix("lockstep_") }, "\(debs)"))
        let dev = temp.path + "/" + (try #require(debs.first { $0.hasPrefix("liblockstep-audiotoolbox-dev_") }, "\(debs)"))
        #expect(debs.count == 2, "\(debs)")
        let info = try CLI.run(["--field", runtime, "Package", "Version", "Depends"], executable: "/usr/bin/dpkg-deb")
        #expect(info.stdout.contains("Package: lockstep"))
        for library in ["libjack-jackd2-0", "libsndfile1", "libsoxr0", "liblo7"] {
            #expect(info.stdout.contains(library), "\(info.stdout)")
        }
        let version = try #require(info.stdout.split(separator: "\n").first { $0.hasPrefix("Version: ") }?.dropFirst(9))
        let devInfo = try CLI.run(["--field", dev, "Package", "Section", "Depends"], executable: "/usr/bin/dpkg-deb")
        #expect(devInfo.stdout.contains("Package: liblockstep-audiotoolbox-dev") && devInfo.stdout.contains("Section: libdevel"))
        #expect(devInfo.stdout.contains("Depends: lockstep (= \(version))"), "\(devInfo.stdout)")
        // Each package's files (dpkg-deb --contents: "./usr/…", links as "… -> target").
        func contents(_ deb: String) throws -> Set<String> {
            let listed = try CLI.run(["--contents", deb], executable: "/usr/bin/dpkg-deb")
            #expect(listed.status == 0, "\(listed.stderr)")
            return Set(listed.stdout.split(separator: "\n").compactMap { line -> String? in
                guard !line.hasPrefix("d"), let path = line.split(separator: " ").first(where: { $0.hasPrefix("./usr/") }) else { return nil }
                return String(path.dropFirst("./usr/".count))
            })
        }
        let runtimeFiles = try contents(runtime), devFiles = try contents(dev)
        let devSet = Set(Self.devFiles)
        #expect(runtimeFiles == Set(Self.files).subtracting(devSet).union(["share/doc/lockstep/README.md"]))
        #expect(runtimeFiles.filter { $0.hasPrefix("include/") || $0.hasSuffix(".h") || $0.hasSuffix(".pc") }.isEmpty)
        #expect(devFiles == devSet.union(["share/doc/liblockstep-audiotoolbox-dev/CAPI.md"]))
        // A root of its own: an empty dpkg database there (the libraries lockstep depends on are this
        // machine's, not that root's: --force-depends).
        let root = temp.path + "/root"
        try FileManager.default.createDirectory(atPath: root + "/var/lib/dpkg/info", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root + "/var/lib/dpkg/updates", withIntermediateDirectories: true)
        for file in ["status", "available"] { FileManager.default.createFile(atPath: root + "/var/lib/dpkg/" + file, contents: Data()) }
        let dpkg = ["--root=" + root, "--force-not-root", "--force-script-chrootless", "--log=/dev/null"]
        // The -dev package alone is refused: it needs lockstep of its version.
        let alone = try CLI.run(dpkg + ["-i", dev], executable: "/usr/bin/dpkg")
        #expect(alone.status != 0 && alone.stderr.contains("lockstep"), "\(alone.stderr)")
        let installed = try CLI.run(dpkg + ["--force-depends", "-i", runtime, dev], executable: "/usr/bin/dpkg")
        #expect(installed.status == 0, "\(installed.stderr)")
        for file in Self.files {
            #expect(FileManager.default.fileExists(atPath: root + "/usr/" + file), "\(file) is missing")
        }
        let ran = try CLI.run(["--version"], executable: root + "/usr/bin/lockstep")
        #expect(ran.status == 0 && !ran.stdout.isEmpty)
        // Removing the -dev package leaves the runtime whole; removing that leaves nothing.
        let removedDev = try CLI.run(dpkg + ["-r", "liblockstep-audiotoolbox-dev"], executable: "/usr/bin/dpkg")
        #expect(removedDev.status == 0, "\(removedDev.stderr)")
        for file in Self.files {
            #expect(FileManager.default.fileExists(atPath: root + "/usr/" + file) == !devSet.contains(file), "\(file)")
        }
        let removed = try CLI.run(dpkg + ["-r", "lockstep"], executable: "/usr/bin/dpkg")
        #expect(removed.status == 0, "\(removed.stderr)")
        let left = FileManager.default.enumerator(atPath: root + "/usr")?.compactMap { $0 as? String } ?? []
        #expect(left.isEmpty, "left behind: \(left)")
    }
}
