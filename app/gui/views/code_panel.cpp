#include "views/code_panel.h"

#include "style/paint_util.h"

#include <QFontMetricsF>
#include <QPainter>

#include <algorithm>

namespace flashviz::gui {

namespace {

// The body of the inner loop, the same in both loop orders but for the names of the running
// state: m, ℓ, acc kept on chip (query blocks outer), or m_i, ℓ_i, O_i read back from HBM.
void appendTileUpdate(std::vector<CodeLine>& code, const FlashOptions& options, const QString& m,
                      const QString& l, const QString& acc) {
    using K = StepKind;
    const bool rescale = options.rescale && options.runningMax;
    const bool runningMax = options.runningMax;
    const QString noRescale = rescale ? QString() : QStringLiteral("no rescale!");
    code.insert(
        code.end(),
        {
            {QStringLiteral("S = scale · Q_i K_jᵀ"),
             2,
             {K::ComputeScores},
             options.keepFullScores ? QStringLiteral("+ copy to HBM (debug)")
                                    : QStringLiteral("never leaves the chip"),
             false},
            {runningMax ? QStringLiteral("m_new = max(m, rowmax S)") : QStringLiteral("m_new = m"),
             2,
             {K::UpdateMax},
             runningMax ? QString() : QStringLiteral("no running max"),
             !runningMax},
            {runningMax ? QStringLiteral("P = exp(S − m_new)") : QStringLiteral("P = exp(S)"),
             2,
             {K::ComputeWeights},
             {},
             false},
            {rescale ? QStringLiteral("%1 = e^(%2 − m_new)·%1 + rowsum P").arg(l, m)
                     : QStringLiteral("%1 = %1 + rowsum P").arg(l),
             2,
             {K::UpdateSum},
             noRescale,
             !rescale},
            {rescale ? QStringLiteral("%1 = e^(%2 − m_new)·%1 + P V_j").arg(acc, m)
                     : QStringLiteral("%1 = %1 + P V_j").arg(acc),
             2,
             {K::UpdateOutput},
             noRescale,
             !rescale},
        });
}

} // namespace

std::vector<CodeLine> pseudocode(const VizSettings& s) {
    using K = StepKind;
    const bool runningMax = s.options.runningMax;
    std::vector<CodeLine> code;
    if (s.algorithm == Algorithm::Standard) {
        code = {
            {QStringLiteral("# three passes, each through HBM"), 0, {}, {}, false},
            {QStringLiteral("read Q, K, V"), 0, {K::ReadInputs}, {}, false},
            {QStringLiteral("S = scale · Q Kᵀ"),
             0,
             {K::ComputeScores},
             QStringLiteral("n × n"),
             false},
            {QStringLiteral("write S to HBM"),
             0,
             {K::WriteScores},
             QStringLiteral("n² values out"),
             false},
            {QStringLiteral("read S"), 0, {K::ReadScores}, QStringLiteral("…and back in"), false},
            {QStringLiteral("P = softmax(S)"),
             0,
             {K::ComputeSoftmax},
             QStringLiteral("row by row"),
             false},
            {QStringLiteral("write P to HBM"),
             0,
             {K::WriteWeights},
             QStringLiteral("n² values out"),
             false},
            {QStringLiteral("read P, V"),
             0,
             {K::ReadWeights},
             QStringLiteral("…and back in"),
             false},
            {QStringLiteral("O = P V"), 0, {K::ComputeOutput}, {}, false},
            {QStringLiteral("write O"), 0, {K::WriteOutput}, {}, false},
        };
        return code;
    }
    if (s.options.loopOrder == LoopOrder::QueryOuter) {
        code = {
            {QStringLiteral("for each query block i:"), 0, {}, {}, false},
            {QStringLiteral("load Q_i into SRAM"), 1, {K::LoadQuery}, {}, false},
            {runningMax ? QStringLiteral("m = −∞,  ℓ = 0,  acc = 0")
                        : QStringLiteral("m = 0,  ℓ = 0,  acc = 0"),
             1,
             {K::LoadQuery},
             QStringLiteral("kept on chip"),
             false},
            {QStringLiteral("for each key block j:"), 1, {}, {}, false},
            {QStringLiteral("load K_j, V_j into SRAM"), 2, {K::LoadKeyValue}, {}, false},
        };
        appendTileUpdate(code, s.options, QStringLiteral("m"), QStringLiteral("ℓ"),
                         QStringLiteral("acc"));
        code.insert(code.end(),
                    {
                        {QStringLiteral("m = m_new"), 2, {K::UpdateOutput}, {}, false},
                        {QStringLiteral("O_i = acc / ℓ"),
                         1,
                         {K::Normalise},
                         QStringLiteral("once, at the end"),
                         false},
                        {QStringLiteral("write O_i to HBM"), 1, {K::StoreOutput}, {}, false},
                    });
        return code;
    }
    code = {
        {QStringLiteral("write O = 0, m = −∞, ℓ = 0 to HBM"), 0, {K::InitialiseOutput}, {}, false},
        {QStringLiteral("for each key block j:"),
         0,
         {},
         QStringLiteral("the paper's order"),
         false},
        {QStringLiteral("load K_j, V_j into SRAM"), 1, {K::LoadKeyValue}, {}, false},
        {QStringLiteral("for each query block i:"), 1, {}, {}, false},
        {QStringLiteral("load Q_i"), 2, {K::LoadQuery}, {}, false},
        {QStringLiteral("load O_i, m_i, ℓ_i from HBM"), 2, {K::LoadRunningState}, {}, false},
    };
    appendTileUpdate(code, s.options, QStringLiteral("m_i"), QStringLiteral("ℓ_i"),
                     QStringLiteral("O_i"));
    code.insert(
        code.end(),
        {
            {QStringLiteral("last key block: O_i = O_i / ℓ_i"), 2, {K::Normalise}, {}, false},
            {QStringLiteral("write O_i, m_i, ℓ_i to HBM"),
             2,
             {K::StoreRunningState},
             QStringLiteral("every step"),
             false},
        });
    return code;
}

int lineOf(const std::vector<CodeLine>& code, StepKind kind) {
    for (std::size_t i = 0; i < code.size(); ++i)
        if (std::find(code[i].kinds.begin(), code[i].kinds.end(), kind) != code[i].kinds.end())
            return int(i);
    return -1;
}

CodePanel::CodePanel(QWidget* parent) : FrameView(parent) {
    setAttribute(Qt::WA_OpaquePaintEvent);
}

void CodePanel::frameChanged() {
    if (!scene()) {
        m_code.clear();
        m_current = -1;
        return;
    }
    m_code = pseudocode(scene()->settings);
    m_current = lineOf(m_code, m_frame->state.info.kind);
}

void CodePanel::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    p.fillRect(rect(), m_theme.panel);
    const qreal sc = m_theme.scale;
    const QRectF area = QRectF(rect()).adjusted(10 * sc, 8 * sc, -10 * sc, -8 * sc);
    if (m_code.empty()) return;
    const QFont titleFont = m_theme.font(9.5, true);
    const qreal titleH = QFontMetricsF(titleFont).height() + 6 * sc;
    p.setPen(m_theme.muted);
    const Scene& scene = *m_frame->scene;
    const QString title = !scene.isFlash() ? tr("Standard attention")
                          : scene.settings.options.loopOrder == LoopOrder::QueryOuter
                              ? tr("FlashAttention · query block outer")
                              : tr("FlashAttention · key/value block outer (paper)");
    drawFittedText(p, QRectF(area.left(), area.top(), area.width(), titleH),
                   Qt::AlignLeft | Qt::AlignVCenter, title, titleFont);
    // A row height that fits every line, up to a comfortable maximum.
    const qreal available = area.height() - titleH;
    const qreal rowH = std::min(available / qreal(m_code.size()), 30 * sc);
    qreal point = std::clamp(rowH / (2.0 * sc), 6.0, 10.5);
    // Shrink until the longest line (with its indent) fits the width.
    for (; point > 6.0; point -= 0.25) {
        const QFontMetricsF fm(m_theme.mono(point, true));
        qreal widest = 0;
        for (const CodeLine& line : m_code)
            widest = std::max(widest, fm.horizontalAdvance(QStringLiteral("    ")) * line.indent +
                                          fm.horizontalAdvance(line.text));
        if (widest + 12 * sc <= area.width()) break;
    }
    QFont codeFont = m_theme.mono(point);
    QFont commentFont = m_theme.font(std::max(6.0, point - 1.5));
    commentFont.setItalic(true);
    const qreal indentW = QFontMetricsF(codeFont).horizontalAdvance(QStringLiteral("    "));
    for (std::size_t i = 0; i < m_code.size(); ++i) {
        const CodeLine& line = m_code[i];
        const QRectF r(area.left(), area.top() + titleH + qreal(i) * rowH, area.width(), rowH);
        const bool current = int(i) == m_current;
        if (current) {
            p.setPen(Qt::NoPen);
            p.setBrush(withAlpha(m_theme.accent, m_theme.lecture ? 90 : 80));
            p.drawRoundedRect(r.adjusted(-4 * sc, 1, 4 * sc, -1), 4 * sc, 4 * sc);
            p.setBrush(m_theme.accent);
            p.drawRect(QRectF(r.left() - 4 * sc, r.top() + 1, 4 * sc, r.height() - 2));
        }
        const qreal x = r.left() + 6 * sc + indentW * line.indent;
        QFont f = codeFont;
        f.setBold(current);
        const bool isComment = line.text.startsWith(QLatin1Char('#'));
        p.setPen(line.removed ? m_theme.bad : isComment ? m_theme.muted : m_theme.text);
        p.setFont(f);
        const qreal textW = QFontMetricsF(f).horizontalAdvance(line.text);
        p.drawText(QRectF(x, r.top(), r.right() - x, r.height()), Qt::AlignLeft | Qt::AlignVCenter,
                   line.text);
        if (!line.comment.isEmpty()) {
            const qreal cx = x + textW + 14 * sc;
            if (cx < r.right() - 30 * sc) {
                p.setPen(line.removed ? m_theme.bad : m_theme.muted);
                QFont cf = commentFont;
                cf.setBold(line.removed);
                drawFittedText(p, QRectF(cx, r.top(), r.right() - cx, r.height()),
                               Qt::AlignLeft | Qt::AlignVCenter,
                               QStringLiteral("# ") + line.comment, cf, 5.5);
            }
        }
    }
}

} // namespace flashviz::gui
