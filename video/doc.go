// Package video turns video frames into the data matrix of robust PCA and
// back, for the paper's foreground–background separation experiment
// (Section 5): the frames, vectorized, are the columns of Y; the static
// background is the low-rank part M* and moving objects are the sparse
// corruptions S*.
//
// Frames come from a directory of images (PNG, JPEG, BMP, PGM/PPM) with
// [LoadDir] or from a video file decoded by an installed ffmpeg with
// [LoadVideo]; [Load] picks one by the path. Both return a [Sequence]
// whose matrix Y has one column per frame:
//
//   - grayscale (default): d1 = width·height rows, the ITU-R BT.601 luma
//     Y' = 0.299 R + 0.587 G + 0.114 B of each pixel scaled to [0, 1],
//     pixels in row-major order within the frame (row y, column x at
//     index y·width + x);
//   - color: d1 = 3·width·height rows, the red plane, then the green
//     plane, then the blue plane, each in the same row-major order and
//     scaled to [0, 1].
//
// Results go back to images with [FrameImage] and [WriteFrames]; [Magnitude]
// and [Mask] turn the sparse part into a visible foreground, and [Montage]
// lays frames out in a labelled grid. [ChooseRank] picks the background's
// rank from the spectrum of Y, and [MedianBackground] is the per-pixel
// temporal median, the usual baseline.
package video
