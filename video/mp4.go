package video

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rpca-gd/rpca/video/frames"
)

// PreviewName is the file name of the preview that a job writes: preview.mp4
// when ffmpeg is found by lookPath (nil: exec.LookPath), preview.gif
// otherwise.
func PreviewName(lookPath func(string) (string, error)) string {
	if lookPath == nil {
		lookPath = exec.LookPath
	}
	if _, err := lookPath("ffmpeg"); err == nil {
		return "preview.mp4"
	}
	return "preview.gif"
}

// mp4Writer encodes RGB frames into an H.264 MP4 (MPEG-4 part 2 when
// ffmpeg lacks libx264) by piping them to ffmpeg, which writes a
// temporary file beside path; finish renames it into place.
type mp4Writer struct {
	path, tmp string
	fps       int
	ffmpeg    string
	ctx       context.Context
	cmd       *exec.Cmd
	stdin     io.WriteCloser
	stderr    bytes.Buffer
	w, h      int
	row       []byte
}

// newMP4Writer finds ffmpeg for an MP4 at path of fps frames per second;
// ffmpeg starts with the first frame, whose size every frame must have.
func newMP4Writer(ctx context.Context, path string, fps int, lookPath func(string) (string, error)) (*mp4Writer, error) {
	if lookPath == nil {
		lookPath = exec.LookPath
	}
	ffmpeg, err := lookPath("ffmpeg")
	if err != nil {
		return nil, fmt.Errorf("video: cannot write %s: %w (not found in PATH); write a .gif instead", path, frames.ErrNoFFmpeg)
	}
	return &mp4Writer{path: path, fps: fps, ffmpeg: ffmpeg, ctx: ctx}, nil
}

// encoder returns ffmpeg's encoder arguments: libx264 when it has it, at
// its fastest preset (a preview is looked at, not kept: the encoder was a
// fifth of the video command's time at the veryfast preset).
func (m *mp4Writer) encoder() []string {
	out, err := exec.CommandContext(m.ctx, m.ffmpeg, "-hide_banner", "-encoders").Output()
	if err == nil && bytes.Contains(out, []byte(" libx264 ")) {
		return []string{"-c:v", "libx264", "-preset", "ultrafast", "-crf", "23", "-pix_fmt", "yuv420p"}
	}
	return []string{"-c:v", "mpeg4", "-q:v", "3", "-pix_fmt", "yuv420p"}
}

// start runs ffmpeg for frames of w×h pixels.
func (m *mp4Writer) start(w, h int) error {
	f, err := os.CreateTemp(filepath.Dir(m.path), "."+filepath.Base(m.path)+".tmp-*.mp4")
	if err != nil {
		return err
	}
	m.tmp = f.Name()
	f.Close()
	m.w, m.h, m.row = w, h, make([]byte, 3*w)
	args := []string{"-hide_banner", "-loglevel", "error", "-y",
		"-f", "rawvideo", "-pix_fmt", "rgb24", "-s", strconv.Itoa(w) + "x" + strconv.Itoa(h), "-framerate", strconv.Itoa(m.fps), "-i", "pipe:0",
		"-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2:color=white"} // yuv420p needs even sizes
	args = append(args, m.encoder()...)
	args = append(args, "-movflags", "+faststart", "-f", "mp4", m.tmp)
	m.cmd = exec.CommandContext(m.ctx, m.ffmpeg, args...)
	m.cmd.Stderr = &m.stderr
	if m.stdin, err = m.cmd.StdinPipe(); err != nil {
		return err
	}
	return m.cmd.Start()
}

// add encodes one frame.
func (m *mp4Writer) add(img *image.RGBA) error {
	b := img.Bounds()
	if m.cmd == nil {
		if err := m.start(b.Dx(), b.Dy()); err != nil {
			m.abort()
			return fmt.Errorf("video: starting ffmpeg for %s: %w", m.path, err)
		}
	}
	if b.Dx() != m.w || b.Dy() != m.h {
		return fmt.Errorf("video: preview frame %d×%d, want %d×%d", b.Dx(), b.Dy(), m.w, m.h)
	}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		px := img.Pix[img.PixOffset(b.Min.X, y):]
		for x := range m.w {
			d, s := m.row[3*x:3*x+3:3*x+3], px[4*x:4*x+3:4*x+3]
			d[0], d[1], d[2] = s[0], s[1], s[2]
		}
		if _, err := m.stdin.Write(m.row); err != nil {
			return m.failed(err)
		}
	}
	return nil
}

// failed ends ffmpeg after an error and returns the error with what
// ffmpeg said.
func (m *mp4Writer) failed(err error) error {
	m.abort()
	if err := m.ctx.Err(); err != nil {
		return err
	}
	if msg := strings.TrimSpace(m.stderr.String()); msg != "" {
		return fmt.Errorf("video: ffmpeg writing %s: %v: %s", m.path, err, msg)
	}
	return fmt.Errorf("video: ffmpeg writing %s: %w", m.path, err)
}

// finish waits for ffmpeg and renames its file to path.
func (m *mp4Writer) finish() error {
	if m.cmd == nil {
		return errors.New("video: a preview needs at least one frame")
	}
	m.stdin.Close()
	if err := m.cmd.Wait(); err != nil {
		m.cmd = nil
		return m.failed(err)
	}
	m.cmd = nil
	if err := syncFile(m.tmp); err != nil {
		os.Remove(m.tmp)
		return err
	}
	if err := os.Rename(m.tmp, m.path); err != nil {
		os.Remove(m.tmp)
		return err
	}
	m.tmp = ""
	return nil
}

// abort stops ffmpeg and removes its file.
func (m *mp4Writer) abort() {
	if m.cmd != nil && m.cmd.Process != nil {
		m.stdin.Close()
		m.cmd.Process.Kill()
		m.cmd.Wait()
		m.cmd = nil
	}
	if m.tmp != "" {
		os.Remove(m.tmp)
	}
}

// syncFile gives the file that ffmpeg wrote the permissions of rpca's
// other outputs (CreateTemp made it 0600) and makes it durable before it
// is renamed into place.
func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
