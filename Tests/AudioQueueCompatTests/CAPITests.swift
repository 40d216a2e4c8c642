import AudioQueueCompat
import CJack
import Foundation
import Lockstep
import LockstepFiles
import LockstepTestSupport
import Testing

/// The C programs of `Examples/C`, compiled with `cc`/`c++` against the C API of the build tree
/// (its headers and `liblockstep-audiotoolbox.so`) through a pkg-config file, as a user compiles
/// them: `cc prog.c $(pkg-config --cflags --libs lockstep-audiotoolbox)`.
struct CAPIBuild {
    /// The package's root folder.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
    /// The build folder holding the library (next to the test bundle).
    static let buildFolder = URL(fileURLWithPath: CLI.executable(named: "lockstep")).deletingLastPathComponent().path
    static var library: String { buildFolder + "/liblockstep-audiotoolbox.so" }

    let temp: TemporaryTestDirectory

    /// A pkg-config file for the build tree, in the test's folder.
    init(_ temp: TemporaryTestDirectory) throws {
        self.temp = temp
        let pc = """
            Name: lockstep-audiotoolbox
            Description: Apple's Audio Queue Services C API on Lockstep (build tree)
            Version: 0
            Cflags: -I\(Self.root)/Sources/LockstepAudioToolbox/include -I\(Self.root)/Sources/CAudioQueueTypes/include
            Libs: -L\(Self.buildFolder) -llockstep-audiotoolbox

            """
        try pc.write(toFile: temp.file("lockstep-audiotoolbox.pc"), atomically: true, encoding: .utf8)
    }

    /// The environment that finds the pkg-config file and, at run time, the library.
    var environment: [String: String] {
        ["PKG_CONFIG_PATH": temp.path, "LD_LIBRARY_PATH": Self.buildFolder]
    }

    /// Compiles `Examples/C/<source>` (C with `cc`, C++ with `c++`) with every warning as an error;
    /// returns the executable's path.
    func compile(_ source: String) throws -> String {
        let output = temp.file(String(source.prefix { $0 != "." }))
        let compiler = source.hasSuffix(".cpp") ? "c++" : "cc"
        let command = "\(compiler) -Wall -Wextra -Werror '\(Self.root)/Examples/C/\(source)' -o '\(output)' -lpthread "
            + "$(pkg-config --cflags --libs lockstep-audiotoolbox)"
        let result = try CLI.run(["-c", command], environment: environment, timeout: 180, executable: "/bin/sh")
        #expect(result.status == 0, "\(command)\n\(result.stderr)")
        return output
    }

    /// Writes `source` (C) to `name`.c in the test's folder and compiles it with `compiler`,
    /// every warning an error, the C API's flags and `flags`; returns the executable's path.
    func compile(program source: String, named name: String, with compiler: String, flags: String) throws -> String {
        try source.write(toFile: temp.file(name + ".c"), atomically: true, encoding: .utf8)
        let command = "\(compiler) -Wall -Wextra -Werror '\(temp.file(name + ".c"))' -o '\(temp.file(name))' "
            + "$(pkg-config --cflags --libs lockstep-audiotoolbox) \(flags)"
        let compiled = try CLI.run(["-c", command], environment: environment, executable: "/bin/sh")
        try #require(compiled.status == 0, "\(command)\n\(compiled.stderr)")
        return temp.file(name)
    }

    /// Runs a compiled program to completion.
    func run(_ program: String, _ arguments: [String], server: String? = nil, timeout: Double = 120) throws -> CLI.Result {
        var environment = self.environment
        if let server { environment["JACK_DEFAULT_SERVER"] = server }
        return try CLI.run(arguments, environment: environment, timeout: timeout, executable: program)
    }

    /// C source of `floatStereo()`, the format of the test programs' queues: 48 kHz, stereo,
    /// 32-bit float, interleaved.
    static let floatStereoC = """
        static AudioStreamBasicDescription floatStereo(void) {
            AudioStreamBasicDescription f;
            memset(&f, 0, sizeof f);
            f.mSampleRate = 48000; f.mFormatID = kAudioFormatLinearPCM;
            f.mFormatFlags = kLinearPCMFormatFlagIsFloat | kLinearPCMFormatFlagIsPacked;
            f.mChannelsPerFrame = 2; f.mBitsPerChannel = 32; f.mFramesPerPacket = 1;
            f.mBytesPerFrame = f.mBytesPerPacket = 8;
            return f;
        }
        """

    /// Starts a compiled program.
    func spawn(_ program: String, _ arguments: [String], server: String) throws -> RunningCLI {
        var environment = self.environment
        environment["JACK_DEFAULT_SERVER"] = server
        return try CLI.spawn(arguments, environment: environment, executable: program)
    }
}

extension AQCompatTests {
    /// The C API without a JACK server: the headers, the exported symbols, offline rendering.
    @Suite("C API", .serialized)
    struct CAPITests {
        let temp: TemporaryTestDirectory
        let build: CAPIBuild
        init() throws {
            temp = try TemporaryTestDirectory(prefix: "aqcompat-capi")
            build = try CAPIBuild(temp)
        }

        @Test("every function the headers declare is exported by the library, and nothing of CoreFoundation's names")
        func headersMatchLibrary() throws {
            let include = CAPIBuild.root + "/Sources/LockstepAudioToolbox/include"
            var declared: Set<String> = []
            let enumerator = FileManager.default.enumerator(atPath: include)
            while let file = enumerator?.nextObject() as? String {
                guard file.hasSuffix(".h") else { continue }
                let text = try String(contentsOfFile: include + "/" + file, encoding: .utf8)
                // `OSStatus AudioQueueStart(`, `CFStringRef LockstepCFSTR(`, … at the start of a line.
                let pattern = try Regex(#"(?m)^[A-Za-z][A-Za-z0-9_ ]*[ *]((?:AudioQueue|AudioFile|ExtAudioFile|AudioConverter|LockstepCF)\w*)\("#)
                for match in text.matches(of: pattern) { declared.insert(String(match.output[1].substring!)) }
            }
            #expect(declared.count > 80, "\(declared.count) functions declared")
            let nm = try CLI.run(["-D", "--defined-only", CAPIBuild.library], executable: "/usr/bin/nm")
            #expect(nm.status == 0, "\(nm.stderr)")
            let exported = Set(nm.stdout.split(separator: "\n").compactMap { line -> String? in
                let fields = line.split(separator: " ")
                return fields.count == 3 && fields[1] == "T" ? String(fields[2]) : nil
            })
            #expect(declared.subtracting(exported).sorted() == [], "declared but not exported")
            // Apple's CF names are macros for LockstepCF…: the library must not interpose on libFoundation's.
            #expect(exported.filter { $0.hasPrefix("CF") }.sorted() == [])
        }

        @Test("the examples compile as C (gcc) and C++ (g++) with every warning an error; the headers as C++, and as strict C99 and C++11")
        func examplesCompile() throws {
            for source in ["aqplay.c", "aqplayback.c", "aqseeds.c", "aqstart.c", "aqoffline.c", "aqmeter.c", "aqrecord.cpp"] {
                let program = try build.compile(source)
                #expect(FileManager.default.isExecutableFile(atPath: program), "\(source)")
            }
            // Every header on its own, as C++ (extern "C" linkage: the program links).
            let cpp = temp.file("all.cpp")
            try """
                #include <CoreAudioTypes/CoreAudioTypes.h>
                #include <AudioToolbox/AudioQueue.h>
                #include <AudioToolbox/AudioToolbox.h>
                int main() {
                    AudioTimeStamp ts = AudioTimeStamp();
                    ts.mFlags = kAudioTimeStampSampleTimeValid | kAudioTimeStampHostTimeValid;
                    AudioQueueRef queue = nullptr;
                    OSStatus status = AudioQueueNewOutput(nullptr, nullptr, nullptr, nullptr, nullptr, 0, &queue);
                    return status == kAudio_ParamError && ts.mFlags == 3 && CFStringGetLength(CFSTR("abc")) == 3 ? 0 : 1;
                }
                """.write(toFile: cpp, atomically: true, encoding: .utf8)
            let command = "c++ -Wall -Wextra -Werror '\(cpp)' -o '\(temp.file("all"))' $(pkg-config --cflags --libs lockstep-audiotoolbox)"
            let compiled = try CLI.run(["-c", command], environment: build.environment, executable: "/bin/sh")
            #expect(compiled.status == 0, "\(compiled.stderr)")
            let ran = try build.run(temp.file("all"), [])
            #expect(ran.status == 0, "\(ran.stderr)")
            // Strict ISO C99 and C++11: the headers use no extension.
            let strict = temp.file("strict.c")
            try "#include <AudioToolbox/AudioToolbox.h>\nint main(void) { return kAudioFormatFlagsAreAllClear != 0x80000000u; }\n"
                .write(toFile: strict, atomically: true, encoding: .utf8)
            for compiler in ["cc -std=c99 -x c", "c++ -std=c++11 -x c++"] {
                let command = "\(compiler) -Wall -Wextra -pedantic -Werror -fsyntax-only '\(strict)' $(pkg-config --cflags lockstep-audiotoolbox)"
                let checked = try CLI.run(["-c", command], environment: build.environment, executable: "/bin/sh")
                #expect(checked.status == 0, "\(command)\n\(checked.stderr)")
            }
        }

        @Test("Apple's AQOfflineRenderTest loop in C renders a WAV and ALAC (CAF, M4A) files: every frame, equal to the file's own decode", arguments: [
            "wav", "wav-24bit", "alac-caf", "alac-m4a",
        ])
        func offlineRender(source kind: String) throws {
            let fixtures = CompressedFixtures.shared
            var source = kind == "wav" ? fixtures.directory.file("source.wav") : kind == "alac-caf" ? try fixtures.alacCAF : try fixtures.alacM4A
            if kind == "wav-24bit" {
                // The file's last buffer is read while the one before goes back: 12 000 frames, not 12 288.
                source = temp.file("short.wav")
                let samples: [Float] = (0..<(12_000 * 2)).map { (index: Int) -> Float in
                    let value: Int = (index * 7919) % 16_001 - 8_000
                    return Float(value) / 8_388_608
                }
                try FileFixtures.writeWAV(path: source, samples: samples,
                                          format: StreamFormat(sampleRate: 44100, channelCount: 2, sampleFormat: .int24))
            }
            let program = try build.compile("aqoffline.c")
            let output = temp.file("offline-\(kind).caf")
            let result = try build.run(program, [source, output])
            #expect(result.status == 0, "\(result.stderr)")
            // The file's own decode (ExtAudioFile, the valid frames), and the rendered file.
            let (sourceStatus, sourceBytes) = try extReadAll(source, client: floatClient44)
            #expect(sourceStatus == noErr)
            let expected = floats(sourceBytes)
            let (status, bytes) = try extReadAll(output, client: floatClient44)
            #expect(status == noErr)
            var rendered = floats(bytes)
            let frames = rendered.count / CompressedFixtures.channels
            #expect(result.stdout.contains("rendered \(frames) frames"), "\(result.stdout)")
            #expect(expected.count >= (kind == "wav-24bit" ? 24_000 : CompressedFixtures.frames * CompressedFixtures.channels))
            if kind.hasPrefix("alac") {
                // Apple's loop plays whole packets (4096 frames of ALAC): where the file's decode
                // trims the last one's padding (M4A's edit list), that silence comes out too.
                #expect(frames % 4096 == 0 && rendered.count >= expected.count, "\(frames) frames")
                #expect((rendered.count - expected.count) / CompressedFixtures.channels < 4096)
                #expect(rendered[min(rendered.count, expected.count)...].allSatisfy { $0 == 0 })
                rendered = Array(rendered.prefix(expected.count))
            }
            #expect(rendered.count == expected.count, "rendered \(frames) frames")
            #expect(rendered == expected, "\(zip(rendered, expected).filter { $0 != $1 }.count) samples differ")
        }
    }
}

extension JACKTests {
    /// The C programs against a private dummy-driver jackd, their output captured by another JACK
    /// client (or their file read back) and compared with what they were given.
    @Suite("C API on JACK", .serialized)
    struct CAPIJACKTests {
        let temp: TemporaryTestDirectory
        let build: CAPIBuild
        init() throws {
            temp = try TemporaryTestDirectory(prefix: "aqcompat-capi-jack")
            build = try CAPIBuild(temp)
        }

        /// A capture of `sources`, connected as soon as those ports exist (the program registers
        /// them when its queue first needs the device).
        func capture(_ server: JACKServer, _ sources: [String], seconds: Double) throws -> JACKCapture {
            try server.waitForPort(sources[0], timeout: 10)
            for _ in 0..<100 {
                let capture = try JACKCapture(server: server, sources: sources, maxSeconds: seconds)
                do {
                    try capture.start()
                    return capture
                } catch {
                    capture.stop()
                    usleep(5000)
                }
            }
            throw JACKFixtureError.portNotFound(sources[0], seconds: 0.5)
        }

        /// Connects `source`'s channel 0 to each of `ports` once they exist and their client is
        /// active (its ports exist a moment before they can be connected).
        func connect(_ source: JACKRampSource, to ports: [String], on server: JACKServer) throws {
            for port in ports {
                try server.waitForPort(port, timeout: 10)
                var connected = false
                for _ in 0..<200 where !connected {
                    do {
                        try source.connect(channel: 0, to: port)
                        connected = true
                    } catch {
                        usleep(5000)
                    }
                }
                if !connected { try source.connect(channel: 0, to: port) }
            }
        }

        /// Runs `program` (a player of the file given) on a file of `lead` frames of silence (time
        /// for the capture to connect) and `frames` of a stereo signal at 48 kHz 16-bit, captures its
        /// client's outputs independently, and checks every frame was heard once, exactly, and
        /// nothing else; `printed` checks its output.
        func checkPlayback(_ program: String, client: String, lead: Int, frames: Int, printed: (String) -> Void) throws {
            let signal: [Float] = (0..<(frames * 2)).map { (index: Int) -> Float in
                let value: Int = (index * 7919) % 20_000 - 9_999
                return Float(value) / 32768
            }
            let file = temp.file("\(client).wav")
            try writeFile(file, [Float](repeating: 0, count: lead * 2) + signal, format: .int16)
            try retryingOnXruns("CAPIJACKTests") { xrun in
                let server = try JACKServer()
                let process = try build.spawn(program, [file], server: server.name)
                let capture = try capture(server, ["\(client):out_1", "\(client):out_2"], seconds: 5)
                let result = process.wait(timeout: 20)
                xrun.set(capture.xrunCount > 0)
                capture.stop()
                #expect(result.status == 0, "\(result.stderr)")
                printed(result.stdout)
                for channel in 0..<2 {
                    let audio = capture.channel(channel)
                    let heard = try #require(audio.firstIndex { $0 != 0 }, "nothing heard on channel \(channel + 1)")
                    let expected = stride(from: channel, to: signal.count, by: 2).map { signal[$0] }
                    #expect(Array(audio[heard...].prefix(frames)) == expected, "channel \(channel + 1)")
                    #expect(audio[(heard + frames)...].allSatisfy { $0 == 0 }, "only the file is heard")
                }
            }
        }

        @Test("aqplay (AudioFileReadPacketData, callbacks on the main run loop, CFRunLoopRunInMode) plays every frame of a file, exactly, on the run loop's thread")
        func player() throws {
            try checkPlayback(try build.compile("aqplay.c"), client: "aqplay", lead: 24_000, frames: 19_200) { stdout in
                #expect(stdout.contains("played 43200 packets; 0 callbacks off the run loop's thread"), "\(stdout)")
            }
        }

        @Test("aqplayback (the playback guide's Listings 3-1…3-17 in C: AQPlayerState, HandleOutputBuffer, DeriveBufferSize, the cookie, priming, the CFRunLoopRunInMode loop) plays every frame of a file, exactly, once")
        func playbackListings() throws {
            // 0.7 s: two of the guide's half-second buffers, so the third callback reads nothing and stops.
            try checkPlayback(try build.compile("aqplayback.c"), client: "aqplayback", lead: 24_000, frames: 9_600) { stdout in
                #expect(stdout == "played 33600 packets\n", "\(stdout)")
            }
        }

        @Test("aqseeds (the seed documents' Listing 1-7 with AudioFileReadPackets, 1-8's volume, 1-9's level meters, in C) plays every frame of a file, exactly, and meters its peak")
        func seedListings() throws {
            // The signal's loudest sample is 10000/32768: -10.3 dBFS.
            try checkPlayback(try build.compile("aqseeds.c"), client: "aqseeds", lead: 24_000, frames: 19_200) { stdout in
                #expect(stdout == "played 43200 packets; loudest peak -10.3 dB\n", "\(stdout)")
            }
        }

        @Test("aqrecord (the recording guide's Listings 2-1…2-15, C++) writes every frame of a JACK ramp once, in order, to 24-bit AIFF")
        func recorder() throws {
            let program = try build.compile("aqrecord.cpp")
            try retryingOnXruns("CAPIJACKTests") { xrun in
                let server = try JACKServer()
                // One step of 2⁻²³ a frame: exact in 24 bits for minutes (16 bits would clip after 0.7 s).
                let ramp = try JACKRampSource(server: server, channels: 1, signal: .ramp(start: 1, step: 1.0 / 8_388_608))
                try ramp.start()
                defer { ramp.stop() }
                let path = temp.file("take.aiff")
                try? FileManager.default.removeItem(atPath: path)
                let process = try build.spawn(program, [path, "1", "48000", "24"], server: server.name)
                try connect(ramp, to: ["aqrecord:in_1", "aqrecord:in_2"], on: server)
                let result = process.wait(timeout: 20)
                xrun.set(ramp.xrunCount > 0)
                #expect(result.status == 0, "\(result.stderr)")
                let (format, samples) = try integerSamples(path)
                #expect(format.sampleFormat == .int24 && format.channelCount == 2 && format.sampleRate == 48000)
                let left = stride(from: 0, to: samples.count, by: 2).map { samples[$0] >> 8 }
                let right = stride(from: 1, to: samples.count, by: 2).map { samples[$0] >> 8 }
                #expect(left == right)
                #expect(result.stdout.contains("recorded \(left.count) packets"), "\(left.count) frames; \(result.stdout)")
                let first = try #require(left.firstIndex { $0 != 0 }, "the ramp is not in the take")
                #expect(left.count > 40_000 && left.count - first > 20_000, "\(left.count) frames, ramp from \(first)")
                let ramped = left[first...]
                let gaps = zip(ramped, ramped.dropFirst()).filter { $1 != $0 + 1 }.count
                #expect(gaps == 0, "the recorded ramp must count up by exactly one every frame")
            }
        }

        @Test("aqstart: AudioQueueStart(queue, &time) at a device time half a second ahead puts the buffer's first frame there (host time, to 16 frames)")
        func startTime() throws {
            let program = try build.compile("aqstart.c")
            try retryingOnXruns("CAPIJACKTests") { xrun in
                let server = try JACKServer()
                let process = try build.spawn(program, ["0.5"], server: server.name)
                let capture = try capture(server, ["aqstart:out_1"], seconds: 5)
                let result = process.wait(timeout: 20)
                xrun.set(capture.xrunCount > 0)
                capture.stop()
                #expect(result.status == 0, "\(result.stderr)")
                // "asked for device time A, started at S (host time H us)"
                let numbers = result.stdout.split(whereSeparator: { !$0.isNumber }).compactMap { UInt64($0) }
                try #require(numbers.count == 3, "\(result.stdout)")
                #expect(numbers[1] >= numbers[0] && numbers[1] - numbers[0] <= 1024, "the nearest start is at most a few periods later")
                // The start's host time in JACK frames, by JACK's own clock; and the frame the click was heard on.
                let expected = try server.withClient { jack_time_to_frames($0, numbers[2]) }
                let audio = capture.channel(0)
                let heard = try #require(audio.firstIndex { $0 != 0 }, "the click was not heard")
                #expect(audio[heard] == 0.5 && audio[(heard + 1)...].allSatisfy { $0 == 0 })
                // Host time ↔ frame is JACK's estimate (its DLL), made by the program and here a second
                // apart; the dummy driver's timer jitter moves it by a few frames, so the check is to a
                // 16th of a period. (Sample-exact starts are AQSimultaneous's test: three queues, one frame.)
                let frame = capture.frameTime(ofRecordedFrame: heard)
                let offset = Int32(bitPattern: frame &- expected)
                #expect(abs(offset) <= 16, "heard at JACK frame \(frame), the start time is frame \(expected)")
            }
        }

        /// A C program of the run loop's rules: modes, CFRunLoopStop from a listener, the result
        /// codes, and CFRunLoopRun's end when the last queue posting to it is disposed of.
        static let runLoopProgram = #"""
            #include <AudioToolbox/AudioToolbox.h>
            #include <pthread.h>
            #include <stdio.h>
            #include <string.h>
            #include <time.h>

            static pthread_t mainThread;
            static int outputs, listened, offThread;

            static void output(void *user, AudioQueueRef queue, AudioQueueBufferRef buffer) {
                (void)user; (void)queue; (void)buffer;
                outputs++;
                if (!pthread_equal(pthread_self(), mainThread)) offThread++;
            }
            static void runningChanged(void *user, AudioQueueRef queue, AudioQueuePropertyID id) {
                (void)user;
                UInt32 running = 1, size = sizeof running;
                AudioQueueGetProperty(queue, id, &running, &size);
                listened++;
                if (!pthread_equal(pthread_self(), mainThread)) offThread++;
                if (!running) CFRunLoopStop(CFRunLoopGetCurrent());
            }
            static double now(void) {
                struct timespec t;
                clock_gettime(CLOCK_MONOTONIC, &t);
                return t.tv_sec + t.tv_nsec / 1e9;
            }
            \#(CAPIBuild.floatStereoC)
            static AudioQueueRef makeQueue(CFStringRef mode) {
                AudioStreamBasicDescription f = floatStereo();
                AudioQueueRef queue;
                if (AudioQueueNewOutput(&f, output, NULL, CFRunLoopGetCurrent(), mode, 0, &queue)) return NULL;
                AudioQueueAddPropertyListener(queue, kAudioQueueProperty_IsRunning, runningChanged, NULL);
                AudioQueueBufferRef buffer;
                AudioQueueAllocateBuffer(queue, 4800 * 8, &buffer);
                memset(buffer->mAudioData, 0, 4800 * 8);
                buffer->mAudioDataByteSize = 4800 * 8;
                AudioQueueEnqueueBuffer(queue, buffer, 0, NULL);
                return queue;
            }

            int main(void) {
                mainThread = pthread_self();
                // Nothing posted, no source: the time runs out.
                printf("empty %d\n", (int)CFRunLoopRunInMode(kCFRunLoopDefaultMode, 0.05, false));
                // A queue in a mode of its own: nothing of it runs in the default mode.
                CFStringRef custom = CFSTR("org.lockstep.custom");
                AudioQueueRef queue = makeQueue(custom);
                AudioQueueStart(queue, NULL);
                AudioQueueStop(queue, false);
                CFRunLoopRunInMode(kCFRunLoopDefaultMode, 0.5, false);
                printf("default mode: %d outputs %d listened\n", outputs, listened);
                int result = CFRunLoopRunInMode(custom, 2, true);
                printf("custom mode, return after one: %d\n", result);
                while (listened < 2 && CFRunLoopRunInMode(custom, 2, false) != kCFRunLoopRunTimedOut) {}
                printf("custom mode: %d outputs %d listened\n", outputs, listened);
                AudioQueueDispose(queue, true);
                // The common modes: CFRunLoopRun until the listener stops it at the end.
                queue = makeQueue(kCFRunLoopCommonModes);
                outputs = listened = 0;
                AudioQueueStart(queue, NULL);
                AudioQueueStop(queue, false);
                // The device's UID, a CFString the caller releases (the JACK client: this program).
                CFStringRef device = NULL;
                UInt32 size = sizeof device;
                char name[64] = "";
                if (AudioQueueGetProperty(queue, kAudioQueueProperty_CurrentDevice, &device, &size) == noErr
                    && CFStringGetCString(device, name, sizeof name, kCFStringEncodingUTF8))
                    printf("device %s (%ld characters)\n", name, CFStringGetLength(device));
                CFRelease(device);
                double start = now();
                CFRunLoopRun();
                printf("CFRunLoopRun stopped by the listener: %d outputs %d listened\n", outputs, listened);
                // Disposed of: no source left, CFRunLoopRun returns at once.
                AudioQueueDispose(queue, true);
                start = now();
                CFRunLoopRun();
                printf("CFRunLoopRun without sources returned after %s\n", now() - start < 0.1 ? "less than 0.1 s" : "too long");
                printf("%d callbacks off the main thread\n", offThread);
                return 0;
            }
            """#

        @Test("a C program's callbacks and listeners run on its run loop, in their mode: CFRunLoopRunInMode's result codes, CFRunLoopStop from a listener, CFRunLoopRun ends when no queue is left; the device's UID as a CFString")
        func runLoop() throws {
            let program = try build.compile(program: Self.runLoopProgram, named: "runloop", with: "cc", flags: "-lpthread")
            let server = try JACKServer()
            let result = try build.run(program, [], server: server.name)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout == """
                empty 3
                default mode: 0 outputs 0 listened
                custom mode, return after one: 4
                custom mode: 1 outputs 2 listened
                device runloop (7 characters)
                CFRunLoopRun stopped by the listener: 1 outputs 2 listened
                CFRunLoopRun without sources returned after less than 0.1 s
                0 callbacks off the main thread

                """, "\(result.stdout)")
        }

        @Test("aqmeter: kAudioQueueProperty_CurrentLevelMeterDB of a recording queue reads a constant 0.5 as −6.02 dB peak and average, on the run loop's thread")
        func meter() throws {
            let program = try build.compile("aqmeter.c")
            try retryingOnXruns("CAPIJACKTests") { xrun in
                let server = try JACKServer()
                let source = try JACKRampSource(server: server, channels: 1, signal: .constant(0.5))
                try source.start()
                defer { source.stop() }
                let process = try build.spawn(program, ["1"], server: server.name)
                try connect(source, to: ["aqmeter:in_1", "aqmeter:in_2"], on: server)
                let result = process.wait(timeout: 20)
                xrun.set(source.xrunCount > 0)
                #expect(result.status == 0, "\(result.stderr)")
                let levels = result.stdout.split(separator: "\n").filter { $0.hasPrefix("level") }
                #expect(levels.count == 10)
                // The last readings: the source has been connected for most of the second.
                for line in levels.suffix(3) {
                    let values = line.split(whereSeparator: { $0 == "=" || $0 == "/" || $0 == " " }).compactMap { Double($0) }
                    #expect(values.count == 4 && values.allSatisfy { abs($0 - -6.02) < 0.05 }, "\(line)")
                }
                #expect(result.stdout.contains("; 0 callbacks off the run loop's thread"), "\(result.stdout)")
                #expect(!result.stdout.contains(" 0 buffers recorded"), "\(result.stdout)")
            }
        }
    }
}
