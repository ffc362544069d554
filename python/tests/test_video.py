import warnings

import numpy as np
import pytest

import rpca


def clip(t=60, h=36, w=48, color=False, seed=3):
    """A textured static background with a bright square moving across it,
    and the square's true masks."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:h, 0:w]
    bg = 0.35 + 0.15 * np.sin(xx / 3) * np.cos(yy / 4) + 0.05 * rng.random((h, w))
    if color:
        bg = np.stack([bg, 0.9 * bg, 0.8 * bg], axis=-1)
    frames = np.repeat(bg[np.newaxis], t, axis=0).copy()
    truth = np.zeros((t, h, w), dtype=bool)
    for k in range(t):
        x0, y0 = (3 * k) % (w - 7), (2 * k + 5) % (h - 7)
        truth[k, y0:y0 + 7, x0:x0 + 7] = True
        frames[k][truth[k]] = 0.96
    return np.round(frames * 255) / 255, truth, bg


def f_measure(pred, truth):
    tp = (pred & truth).sum()
    return 2 * tp / (pred.sum() + truth.sum())


@pytest.mark.parametrize("color", [False, True])
def test_separate_finds_the_square(color):
    frames, truth, bg = clip(color=color)
    back, mask, rep = rpca.video.separate(frames)
    assert back.shape == frames.shape and mask.shape == truth.shape and mask.dtype == bool
    assert f_measure(mask, truth) > 0.95
    # The background is the static one, up to its 8-bit rounding, away
    # from the square.
    err = np.abs(back - np.round(bg * 255) / 255)
    assert np.median(err) < 2 / 255
    assert rep["rank"] >= 1 and rep["method"] == "scaledgd"
    # uint8 frames are the same frames.
    back8, mask8, _ = rpca.video.separate(np.round(frames * 255).astype(np.uint8))
    assert np.array_equal(mask8, mask) and np.allclose(back8, back, atol=1e-9)


def test_separate_median_and_errors():
    frames, truth, _ = clip()
    _, mask, rep = rpca.video.separate(frames, method="median")
    assert rep["method"] == "median" and f_measure(mask, truth) > 0.95
    with pytest.raises(ValueError):
        rpca.video.separate(frames[:1])
    with pytest.raises(ValueError):
        rpca.video.separate(frames[..., np.newaxis].repeat(2, axis=-1))
    bad = frames.copy()
    bad[3, 4, 5] = np.nan
    with pytest.raises(ValueError):
        rpca.video.separate(bad)
    with pytest.raises(ValueError):
        rpca.video.separate(frames, method="nosuch")


def test_subtractor_frame_by_frame():
    frames, truth, _ = clip(t=80, color=True)
    sub = rpca.video.Subtractor(history=30, refit=10, warmup=20)
    masks = []
    for k, f in enumerate(frames):
        m = sub.apply(f)
        assert m.shape == truth.shape[1:] and m.dtype == bool
        masks.append(m)
    masks = np.array(masks)
    assert sub.background_.shape == frames.shape[1:]
    info = sub.info()
    assert info["fits"] >= 5 and info["rank"] >= 1
    assert f_measure(masks[20:], truth[20:]) > 0.9
    m, b = sub.apply(frames[0], return_background=True)
    assert b.shape == frames.shape[1:]
    with pytest.raises(ValueError):
        sub.apply(frames[0][:10])
    with pytest.raises(ValueError):
        rpca.video.Subtractor(history=1).apply(frames[0])
    with pytest.raises(ValueError, match="track"):
        rpca.video.Subtractor(track=-0.5)


def _cli_masks(rpca_cli, tmp_path, frames, *flags):
    """rpca video's masks of frames (written as PNGs) as a bool array."""
    import subprocess
    from PIL import Image
    src = tmp_path / "frames"
    src.mkdir(parents=True)
    for k, f in enumerate(np.round(frames * 255).astype(np.uint8)):
        Image.fromarray(f).save(src / ("f%03d.png" % k))
    out = tmp_path / "out"
    subprocess.check_call([rpca_cli, "video", "--in", str(src), "--out", str(out), "--quiet",
                           "--preview=false", *flags])
    return np.array([np.asarray(Image.open(out / "mask" / ("f%03d.png" % k))) > 0 for k in range(len(frames))])


def test_video_agrees_with_the_command_line(rpca_cli, tmp_path):
    """separate and Subtractor decide the masks of rpca video and rpca video
    --stream on the same frames, pixel for pixel."""
    pytest.importorskip("PIL")
    frames, _, _ = clip(t=50, color=True)
    _, mask, _ = rpca.video.separate(frames)
    assert np.array_equal(mask, _cli_masks(rpca_cli, tmp_path / "batch", frames))
    # rpca video --stream holds its warm-up back: 50 frames, at most the
    # history.
    sub = rpca.video.Subtractor(history=30, refit=10, warmup=30)
    stream = np.array([m for f in frames for m in sub.push(f)])
    assert np.array_equal(stream, _cli_masks(rpca_cli, tmp_path / "stream", frames,
                                             "--stream", "--history", "30", "--refit", "10"))
    # Without tracking: the same masks as --track 0, and after the warm-up
    # backgrounds that are not the default's (so the option is not dropped
    # on the way; the masks of this clip do not change).
    backs = {}
    for track in (0, 1):
        sub = rpca.video.Subtractor(history=30, refit=10, warmup=30, track=track)
        out = [p for f in frames for p in sub.push(f, return_background=True)]
        backs[track] = np.array([b for _, b in out])
        if track == 0:
            fixed = np.array([m for m, _ in out])
    assert np.array_equal(fixed, _cli_masks(rpca_cli, tmp_path / "fixed", frames,
                                            "--stream", "--history", "30", "--refit", "10", "--track", "0"))
    # (The held frames' are the same up to rounding: the model's basis
    # holds its constants first when it is tracked.)
    assert np.abs(backs[0][:30] - backs[1][:30]).max() < 1e-12
    assert np.abs(backs[0][30:] - backs[1][30:]).max() > 1e-3


def test_pixel_noise_agrees_with_the_command_line(rpca_cli, tmp_path):
    """pixel_noise=True gives rpca video --pixel-noise's masks, in batch and
    as a stream, and they are not the default's (so the option is not
    dropped on the way)."""
    pytest.importorskip("PIL")
    frames, _, _ = clip(t=50, color=True)
    # A flickering band (foliage): the pixels' own noise hides it.
    rng = np.random.default_rng(8)
    frames[:, :6] = np.round(np.clip(frames[:, :6] + 0.15 * rng.standard_normal(frames[:, :6].shape), 0, 1) * 255) / 255
    _, mask, rep = rpca.video.separate(frames, pixel_noise=True)
    cli = _cli_masks(rpca_cli, tmp_path / "batch", frames, "--pixel-noise")
    assert np.array_equal(mask, cli)
    assert not np.array_equal(cli, rpca.video.separate(frames)[1])
    sub = rpca.video.Subtractor(history=30, refit=10, warmup=30, pixel_noise=True)
    stream = np.array([m for f in frames for m in sub.push(f)])
    assert np.array_equal(stream, _cli_masks(rpca_cli, tmp_path / "stream", frames, "--pixel-noise",
                                             "--stream", "--history", "30", "--refit", "10"))


def test_subtractor_push_holds_the_warmup():
    """push returns nothing during the warm-up, all its masks at its end,
    then one a frame; from the last warm-up frame on they are apply's;
    flush hands out what a short input leaves held."""
    frames, truth, _ = clip(t=60, color=True)
    pushed, applied = [], []
    a = rpca.video.Subtractor(history=30, refit=10, warmup=20)
    p = rpca.video.Subtractor(history=30, refit=10, warmup=20)
    for k, f in enumerate(frames):
        out = p.push(f)
        assert len(out) == (0 if k < 19 else 20 if k == 19 else 1), (k, len(out))
        pushed.extend(out)
        applied.append(a.apply(f))
    assert len(pushed) == len(frames)
    assert all(m.shape == truth.shape[1:] and m.dtype == bool for m in pushed)
    assert all((x == y).all() for x, y in zip(pushed[19:], applied[19:]))
    assert f_measure(np.array(pushed), truth) >= f_measure(np.array(applied), truth)
    short = rpca.video.Subtractor(history=30, refit=10, warmup=20)
    assert all(short.push(f) == [] for f in frames[:12])
    held = short.flush(return_background=True)
    assert len(held) == 12 and held[0][1].shape == frames.shape[1:]
    assert short.flush() == []


@pytest.mark.parametrize("method", ["gd", "accaltproj"])
def test_named_methods_agree_with_the_command_line(rpca_cli, tmp_path, method):
    """separate(method=...) runs a named method with rpca video --method's
    settings (the video preset's γ, stopping rules and iteration cap), not
    the method's library defaults: the same iterations and masks."""
    import json
    pytest.importorskip("PIL")
    frames, _, _ = clip(t=50, color=True)
    _, mask, rep = rpca.video.separate(frames, method=method)
    assert np.array_equal(mask, _cli_masks(rpca_cli, tmp_path, frames, "--method", method))
    cli = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert (rep["method"], rep["iterations"], rep["stop"]) == (cli["method"], cli["iterations"], cli["stop_reason"])


def test_separate_warns_of_its_notes():
    """The library's notes on a separation (video.Separation.Notes) come
    out as warnings, one each: a background that is not verified as an
    exact fit as a NotVerifiedWarning, and a clip in which nothing is
    marked as moving as a RuntimeWarning with this package's remedy."""
    frames, _, bg = clip()
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        _, _, rep = rpca.video.separate(frames)
    kinds = [n["kind"] for n in rep["notes"]]
    assert kinds in ([], ["unverified"]) and (kinds == ["unverified"]) == (not rep["verified"])
    assert [w.category for w in got] == [rpca.NotVerifiedWarning] * len(kinds)
    still = np.repeat(np.round(bg * 255)[np.newaxis] / 255, 40, axis=0)
    with pytest.warns(RuntimeWarning, match="no pixel of any frame was marked as foreground; .*: lower noise_factor"):
        _, mask, rep = rpca.video.separate(still)
    assert not mask.any() and "no-foreground" in [n["kind"] for n in rep["notes"]]


def test_displacement_drops_a_shaken_background():
    """A band of colour stripes on a plain background, which the camera
    shifts by two pixels in every tenth frame, and a red square moving
    beside it: the shaken frames' stripe edges are foreground without the
    displacement test (rpca video --displacement 0) and gone with it, the
    square kept."""
    t, h, w = 60, 36, 48
    xx = np.mgrid[0:h, 0:w + 2][1]
    base = np.where((xx // 4) % 2 == 0, 0.25, 0.75)
    base[:, 18:] = 0.5
    wide = np.stack([base, 0.8 * base + 0.1, 0.6 * base + 0.2], axis=-1)
    frames = np.empty((t, h, w, 3))
    truth = np.zeros((t, h, w), dtype=bool)
    shaken = np.arange(t) % 10 == 5
    for k in range(t):
        dx = 2 if shaken[k] else 0
        frames[k] = wide[:, dx:dx + w]
        x0, y0 = 22 + (3 * k) % (w - 29), (2 * k + 5) % (h - 7)
        truth[k, y0:y0 + 7, x0:x0 + 7] = True
        frames[k][truth[k]] = [0.95, 0.1, 0.1]
    frames += 0.01 * np.random.default_rng(5).standard_normal(frames.shape)
    frames = np.round(np.clip(frames, 0, 1) * 255) / 255
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rpca.NotVerifiedWarning)
        _, off, rep_off = rpca.video.separate(frames, rank=1, displacement=0)
        _, on, rep_on = rpca.video.separate(frames, rank=1)
    assert rep_off["displaced_pixels"] == 0 and rep_on["displaced_pixels"] > 0
    outside_off = (off & ~truth)[shaken].sum()
    outside_on = (on & ~truth)[shaken].sum()
    assert outside_off > 300, outside_off
    assert outside_on == 0, outside_on
    assert f_measure(on, truth) > 0.95
    for bad in (4, -1, 1.5):
        with pytest.raises(ValueError):
            rpca.video.separate(frames, displacement=bad)
