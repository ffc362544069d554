// Package frames reads video frames into the data matrix of robust PCA:
// the frames, vectorized, are the columns of Y.
//
// Frames come from a directory of images (PNG, JPEG, BMP, PGM/PPM) with
// [LoadDir], from a video file or URL decoded by an installed ffmpeg, or
// from YUV4MPEG2 frames on standard input ([StdinInput]); [Load] picks
// one by the path, and [ReadWindows] reads a long input a window of
// frames at a time. Each returns a [Sequence] whose matrix Y has one
// column per frame:
//
//   - grayscale (default): d1 = width·height rows, the ITU-R BT.601 luma
//     Y' = 0.299 R + 0.587 G + 0.114 B of each pixel scaled to [0, 1],
//     pixels in row-major order within the frame (row y, column x at
//     index y·width + x);
//   - color: d1 = 3·width·height rows, the red plane, then the green
//     plane, then the blue plane, each in the same row-major order and
//     scaled to [0, 1].
//
// [Options] select the frames ([Range], [ParseRange]), scale them down
// ([ScaleFactor]) and bound the memory a load may take.
package frames
