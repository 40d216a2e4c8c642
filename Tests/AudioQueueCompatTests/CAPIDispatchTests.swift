import Foundation
import LockstepTestSupport
import Testing

extension JACKTests {
    /// `AudioQueueNewOutputWithDispatchQueue`/`AudioQueueNewInputWithDispatchQueue` from C: a
    /// program with blocks, compiled with `clang -fblocks` against the C API and the Swift
    /// toolchain's libdispatch, run against a private dummy-driver jackd.
    @Suite("C API with dispatch queues and blocks", .serialized)
    struct CAPIDispatchTests {
        /// The Swift toolchain's `usr` folder (libdispatch's headers under `lib/swift`, its
        /// libraries under `lib/swift/linux`): the one whose clang is on the PATH.
        static var toolchain: String? {
            let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
            return path.split(separator: ":").map { URL(fileURLWithPath: String($0)).deletingLastPathComponent().path }
                .first { FileManager.default.fileExists(atPath: $0 + "/lib/swift/dispatch/dispatch.h") }
        }

        /// Block callbacks on a serial queue of the program: an output queue whose three buffers
        /// come back twice each, an input queue that gets six buffers, an offline render whose
        /// block has run (synchronously, through the program's dispatch_sync_f) before it returns.
        static let program = #"""
            #include <AudioToolbox/AudioToolbox.h>
            #include <stdio.h>
            #include <string.h>

            static const char *label = "org.lockstep.test.callbacks";
            \#(CAPIBuild.floatStereoC)
            static int onQueue(void) { return strcmp(dispatch_queue_get_label(DISPATCH_CURRENT_QUEUE_LABEL), label) == 0; }
            static void enqueueThree(AudioQueueRef queue, UInt32 bytes) {
                for (int i = 0; i < 3; i++) {
                    AudioQueueBufferRef buffer;
                    AudioQueueAllocateBuffer(queue, 4800 * 8, &buffer);
                    memset(buffer->mAudioData, 0, 4800 * 8);
                    buffer->mAudioDataByteSize = bytes;
                    AudioQueueEnqueueBuffer(queue, buffer, 0, NULL);
                }
            }

            int main(void) {
                dispatch_queue_t callbacks = dispatch_queue_create(label, NULL);
                dispatch_semaphore_t done = dispatch_semaphore_create(0);
                __block int outputs = 0, inputs = 0, offQueue = 0, frames = 0;
                AudioStreamBasicDescription f = floatStereo();

                AudioQueueRef output;
                OSStatus status = AudioQueueNewOutputWithDispatchQueue(&output, &f, 0, callbacks,
                    ^(AudioQueueRef queue, AudioQueueBufferRef buffer) {
                        if (!onQueue()) offQueue++;
                        int n = ++outputs;
                        if (n <= 3) AudioQueueEnqueueBuffer(queue, buffer, 0, NULL);
                        if (n == 6) dispatch_semaphore_signal(done);
                    });
                if (status) return printf("output: %d %s\n", (int)status, AudioQueueCompatLastErrorMessage()), 1;
                enqueueThree(output, 4800 * 8);
                AudioQueueStart(output, NULL);
                long waited = dispatch_semaphore_wait(done, dispatch_time(DISPATCH_TIME_NOW, 10 * NSEC_PER_SEC));
                AudioQueueDispose(output, true);

                AudioQueueRef input;
                status = AudioQueueNewInputWithDispatchQueue(&input, &f, 0, callbacks,
                    ^(AudioQueueRef queue, AudioQueueBufferRef buffer, const AudioTimeStamp *start, UInt32 packets,
                      const AudioStreamPacketDescription *descriptions) {
                        (void)start; (void)descriptions;
                        if (!onQueue()) offQueue++;
                        frames += packets;
                        int n = ++inputs;
                        if (n <= 3) AudioQueueEnqueueBuffer(queue, buffer, 0, NULL);
                        if (n == 6) dispatch_semaphore_signal(done);
                    });
                if (status) return printf("input: %d %s\n", (int)status, AudioQueueCompatLastErrorMessage()), 1;
                enqueueThree(input, 0);
                AudioQueueStart(input, NULL);
                waited |= dispatch_semaphore_wait(done, dispatch_time(DISPATCH_TIME_NOW, 10 * NSEC_PER_SEC));
                AudioQueueDispose(input, true);

                // Offline: the block has run when the render returns.
                __block int rendered = 0;
                AudioQueueNewOutputWithDispatchQueue(&output, &f, 0, callbacks, ^(AudioQueueRef queue, AudioQueueBufferRef buffer) {
                    (void)queue; (void)buffer;
                    if (!onQueue()) offQueue++;
                    rendered++;
                });
                AudioQueueSetOfflineRenderFormat(output, &f, NULL);
                enqueueThree(output, 480 * 8);
                AudioQueueStart(output, NULL);
                AudioQueueBufferRef capture;
                AudioQueueAllocateBuffer(output, 480 * 8, &capture);
                AudioTimeStamp time;
                memset(&time, 0, sizeof time);
                time.mFlags = kAudioTimeStampSampleTimeValid;
                AudioQueueOfflineRender(output, &time, capture, 480);
                int afterOne = rendered;
                AudioQueueDispose(output, true);
                dispatch_sync(callbacks, ^{});   // every block dispatched so far has run

                printf("outputs %d, inputs %d of %d frames, %s\n", outputs, inputs, frames, waited ? "timed out" : "in time");
                printf("offline: %d callback before the render returned\n", afterOne);
                printf("%d callbacks off the dispatch queue\n", offQueue);
                status = AudioQueueNewOutputWithDispatchQueue(&output, &f, 0, callbacks, NULL);
                printf("NULL block: %d (%s)\n", (int)status, AudioQueueCompatLastErrorMessage());
                dispatch_release(callbacks);
                dispatch_release(done);
                return 0;
            }
            """#

        @Test("a C program's blocks run on its dispatch queue (output, input, offline before the render returns); clang -fblocks with the toolchain's libdispatch")
        func blocks() throws {
            let temp = try TemporaryTestDirectory(prefix: "aqcompat-capi-dispatch")
            let build = try CAPIBuild(temp)
            let toolchain = try #require(Self.toolchain, "no Swift toolchain with libdispatch's headers on the PATH")
            let program = try build.compile(program: Self.program, named: "blocks", with: "clang -fblocks",
                                            flags: "-I\(toolchain)/lib/swift -I\(toolchain)/lib/swift/Block -L\(toolchain)/lib/swift/linux "
                                                + "-ldispatch -lBlocksRuntime -Wl,-rpath,\(toolchain)/lib/swift/linux")
            let server = try JACKServer()
            let result = try build.run(program, [], server: server.name)
            #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
            #expect(result.stdout == """
                outputs 6, inputs 6 of \(6 * 4800) frames, in time
                offline: 1 callback before the render returned
                0 callbacks off the dispatch queue
                NULL block: -50 (AudioQueueNewOutputWithDispatchQueue: inCallbackBlock is NULL (-50))

                """, "\(result.stdout)")
        }
    }
}
