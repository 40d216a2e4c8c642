import CRsvg
import Foundation
import LockstepFiles

extension TimelinePicture {
    /// A PNG of the picture could not be made or written.
    public struct PNGError: Error, CustomStringConvertible {
        /// What went wrong and what to do, naming the file.
        public var description: String
    }

    /// Writes the picture as PNG to `path`, rendered from ``svg`` by librsvg (GNOME's SVG
    /// renderer, drawing through cairo) at `scale` times its size in pixels, on white.
    ///
    /// The file appears complete or not at all: it is written under a temporary name and renamed
    /// into place (an existing file at `path` is replaced, as `--svg` and `render -o` do).
    /// - Returns: the PNG's width and height in pixels.
    /// - Throws: ``PNGError`` naming `path` when librsvg cannot draw the picture or the file
    ///   cannot be written (the temporary file is removed).
    @discardableResult
    public func writePNG(to path: String, scale: Double = 1) throws(PNGError) -> (width: Int, height: Int) {
        guard scale.isFinite, scale > 0, scale <= 8 else {
            throw PNGError(description: "\(path): the scale \(scale) is out of range; use a number above 0 and at most 8")
        }
        let output: AtomicFileOutput
        do { output = try AtomicFileOutput(destinationPath: path) } catch {
            throw PNGError(description: error.description)
        }
        var width: Int32 = 0
        var height: Int32 = 0
        var message = [CChar](repeating: 0, count: 512)
        let document = svg
        let status = document.withCString { text in
            lockstep_svg_to_png(text, strlen(text), scale, output.descriptor, &width, &height, &message, message.count)
        }
        guard status == 0 else {
            output.abort()
            let reason = message.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            throw PNGError(description: "\(path): \(reason); nothing was written")
        }
        do { try output.commit() } catch {
            throw PNGError(description: error.description)
        }
        return (Int(width), Int(height))
    }
}
